from kafkabench.cluster.request_log import PHASES, parse, produce_timings

PRODUCE = (
    '[2026-11-28 00:09:13,592] DEBUG Completed request:{"isForwarded":false,"requestHeader":{"requestApiKey":0,'
    '"requestApiVersion":10,"correlationId":3,"clientId":"rdkafka","requestApiKeyName":"PRODUCE"},"request":'
    '{"transactionalId":null,"acks":-1,"timeoutMs":30000,"topicData":[{"name":"orders","partitionData":[{"index":0,'
    '"recordsSizeInBytes":388}]}]},"response":{"responses":[{"name":"orders","partitionResponses":[{"index":0,'
    '"errorCode":0,"baseOffset":41,"logAppendTimeMs":-1,"logStartOffset":0,"recordErrors":[],"errorMessage":null}]}],'
    '"throttleTimeMs":0},"connection":"127.0.0.1:49993-127.0.0.1:59200-2-4","totalTimeMs":9.883,'
    '"requestQueueTimeMs":1.345,"localTimeMs":6.156,"remoteTimeMs":0.0,"throttleTimeMs":0,"responseQueueTimeMs":1.949,'
    '"sendTimeMs":0.432,"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS","listener":"PLAINTEXT",'
    '"clientInformation":{"softwareName":"confluent-kafka-python","softwareVersion":"2.16.1"}} (kafka.request.logger)')


def test_a_produce_line_gives_its_phases_and_the_offset_it_wrote():
    timing = parse(PRODUCE)
    assert (timing.api, timing.client_id, timing.correlation_id, timing.total_ms) == ("PRODUCE", "rdkafka", 3, 9.883)
    assert timing.phases == {"requestQueueTimeMs": 1.345, "localTimeMs": 6.156, "remoteTimeMs": 0.0,
                             "throttleTimeMs": 0.0, "responseQueueTimeMs": 1.949, "sendTimeMs": 0.432}
    assert abs(sum(timing.phases[p] for p in PHASES) - timing.total_ms) < 0.005
    assert timing.offsets == (("orders", 0, 41),)


def test_other_lines_a_cut_line_and_a_failed_write_give_nothing_to_join():
    assert parse("[2026-11-28 00:09:13,592] INFO something else (kafka.server)") is None
    assert parse(PRODUCE[:200]) is None
    failed = PRODUCE.replace('"errorCode":0', '"errorCode":6')
    assert parse(failed).offsets == ()
    assert produce_timings([PRODUCE, failed, "noise"], "orders") == {(0, 41): parse(PRODUCE)}
    assert produce_timings([PRODUCE], "other") == {}


def test_a_newer_client_names_the_topic_by_its_id_and_is_found_by_it():
    by_id = PRODUCE.replace('"name":"orders"', '"topicId":"LgNMu9sMQwKn8_a8VQ-jwA"')
    assert parse(by_id).offsets == (("LgNMu9sMQwKn8_a8VQ-jwA", 0, 41),)
    assert produce_timings([by_id], "orders", "LgNMu9sMQwKn8_a8VQ-jwA") == {(0, 41): parse(by_id)}
    assert produce_timings([by_id], "orders") == {}
