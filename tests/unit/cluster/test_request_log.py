from kafkabench.cluster.request_log import PHASES, fetch_timings, parse, produce_timings

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
    assert timing.written == (("orders", 0, 41),)


def test_other_lines_a_cut_line_and_a_failed_write_give_nothing_to_join():
    assert parse("[2026-11-28 00:09:13,592] INFO something else (kafka.server)") is None
    assert parse(PRODUCE[:200]) is None
    failed = PRODUCE.replace('"errorCode":0', '"errorCode":6')
    assert parse(failed).written == ()
    assert produce_timings([PRODUCE, failed, "noise"], "orders") == {(0, 41): parse(PRODUCE)}
    assert produce_timings([PRODUCE], "other") == {}


def test_a_newer_client_names_the_topic_by_its_id_and_is_found_by_it():
    by_id = PRODUCE.replace('"name":"orders"', '"topicId":"LgNMu9sMQwKn8_a8VQ-jwA"')
    assert parse(by_id).written == (("LgNMu9sMQwKn8_a8VQ-jwA", 0, 41),)
    assert produce_timings([by_id], "orders", "LgNMu9sMQwKn8_a8VQ-jwA") == {(0, 41): parse(by_id)}
    assert produce_timings([by_id], "orders") == {}


def fetch_line(correlation: int, offset: int | None, records: int, session_epoch: int = 0, replica: str = "") -> str:
    asked = ('{"topicId":"LgNMu9sMQwKn8_a8VQ-jwA","partitions":[{"partition":0,"currentLeaderEpoch":0,'
             f'"fetchOffset":{offset},"lastFetchedEpoch":-1,"logStartOffset":-1,"partitionMaxBytes":1048576}}]}}'
             if offset is not None else "")
    return ('[2026-11-28 01:52:46,207] DEBUG Completed request:{"isForwarded":false,"requestHeader":{"requestApiKey":1,'
            f'"requestApiVersion":18,"correlationId":{correlation},"clientId":"kafkabench-java-consumer",'
            f'"requestApiKeyName":"FETCH"}},"request":{{{replica}"maxWaitMs":500,"minBytes":1,"maxBytes":52428800,'
            f'"isolationLevel":0,"sessionId":96515271,"sessionEpoch":{session_epoch},"topics":[{asked}],'
            '"forgottenTopicsData":[],"rackId":""},"response":{"throttleTimeMs":0,"errorCode":0,"sessionId":96515271,'
            '"responses":[{"topicId":"LgNMu9sMQwKn8_a8VQ-jwA","partitions":[{"partitionIndex":0,"errorCode":0,'
            f'"highWatermark":2,"lastStableOffset":2,"logStartOffset":0,"abortedTransactions":null,'
            f'"preferredReadReplica":-1,"recordsSizeInBytes":{records}}}]}}]}},"connection":"127.0.0.1:42115-127.0.0.1:55178-2-6",'
            '"totalTimeMs":51.862,"requestQueueTimeMs":0.841,"localTimeMs":3.047,"remoteTimeMs":47.48,"throttleTimeMs":0,'
            '"responseQueueTimeMs":0.152,"sendTimeMs":0.34,"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS",'
            '"listener":"PLAINTEXT"} (kafka.request.logger)')


def test_the_fetch_that_delivered_a_record_is_found_by_its_fetch_offset():
    delivering = fetch_line(6, 1, 200073, session_epoch=1)
    timing = parse(delivering)
    assert timing.api == "FETCH" and timing.phases["remoteTimeMs"] == 47.48
    assert timing.asked == (("LgNMu9sMQwKn8_a8VQ-jwA", 0, 1),) and timing.delivered == (("LgNMu9sMQwKn8_a8VQ-jwA", 0),)
    empty = fetch_line(5, 1, 0)  # the long poll ran out before the record came: it delivered nothing
    assert parse(empty).delivered == ()
    assert fetch_timings([empty, delivering], "orders", "LgNMu9sMQwKn8_a8VQ-jwA") == {(0, 1): timing}
    assert fetch_timings([delivering], "orders") == {}


def test_a_fetch_session_that_leaves_the_partition_out_asked_for_the_offset_its_connection_asked_for_last():
    asked, unchanged = fetch_line(5, 7, 0), fetch_line(6, None, 200073, session_epoch=2)
    assert parse(unchanged).asked == ()
    assert fetch_timings([asked, unchanged], "orders", "LgNMu9sMQwKn8_a8VQ-jwA") == {(0, 7): parse(unchanged)}
    assert fetch_timings([unchanged], "orders", "LgNMu9sMQwKn8_a8VQ-jwA") == {}  # never asked: not guessed


def test_a_followers_fetch_is_not_a_consumers():
    follower = parse(fetch_line(6, 1, 200073, replica='"replicaState":{"replicaId":2,"replicaEpoch":5},'))
    older = parse(fetch_line(6, 1, 200073, replica='"replicaId":3,'))
    assert (follower.asked, follower.delivered, older.delivered) == ((), (), ())
