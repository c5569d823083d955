import re

from kafkabench.core.records_file import read_records, write_blocks, write_records
from kafkabench.datasets.purchases import FIELDS, POOL, PurchasePools, blocks, purchases
from kafkabench.datasets.sources import open_dataset
from kafkabench.formats.codecs import PurchaseEncoder, make_format

import pytest

from kafkabench.errors import ConfigError


def test_the_same_seed_gives_the_same_rows_and_another_seed_others():
    assert list(purchases(500)) == list(purchases(500))
    assert list(purchases(500, seed=1)) != list(purchases(500))


def test_rows_have_the_seed_schema_and_realistic_values():
    rows = list(purchases(5000))
    assert all(set(row) == set(FIELDS) and len(row) == len(FIELDS) for row in rows)
    assert len({tuple(sorted(row.items(), key=str)) for row in rows}) == len(rows)  # never one repeated record
    assert all(re.fullmatch(r"[가-힣]{2,3}", row["buy_login_name"]) for row in rows)
    assert all(re.fullmatch(r"\d+\.\d+\.\d+\.\d+", row["buy_ipaddr"]) for row in rows)
    assert all(10_000_000 <= row["buy_login_id"] < 100_000_000 for row in rows)
    times = [row["send_tm"] for row in rows]
    assert times == sorted(times) and re.fullmatch(r"2021-10-\d\dT\d\d:\d\d:\d\d", times[-1])
    missing = sum(row["receive_tm"] is None for row in rows) / len(rows)
    assert 0.05 < missing < 0.25  # nullable receive_tm, as in the seed
    assert all(row["receive_tm"] is None or row["receive_tm"] >= row["send_tm"] for row in rows)
    statuses = [row["send_status"] for row in rows]
    assert statuses.count(1) / len(rows) > 0.85 and {0, 1, 2} == set(statuses)
    assert len({row["buy_login_id"] for row in rows}) < len(rows)  # customers come back
    assert all(isinstance(row["buy_mymoney"], int) for row in rows)


@pytest.mark.parametrize("name", ["json", "protobuf", "avro"])
def test_every_format_round_trips(name):
    fmt = make_format(name, open_dataset("purchases"))
    rows = list(purchases(300))
    assert [fmt.decode(fmt.encode(row)) for row in rows] == rows


def test_binary_formats_are_smaller_than_json():
    rows = list(purchases(300))
    size = {name: sum(len(make_format(name, open_dataset("purchases")).encode(r)) for r in rows) for name in ("json", "protobuf", "avro")}
    assert size["protobuf"] < size["json"] / 2 and size["avro"] < size["json"] / 2


def test_csv_rows_go_as_json_or_avro(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("id,name,amount (won)\n1,홍길동,1000\n2,김철수,2500\n", encoding="utf-8")
    dataset = open_dataset(str(path))
    rows = list(dataset.rows(5))  # shorter files start again from the top
    assert len(rows) == 5 and rows[2] == rows[0] and rows[0]["name"] == "홍길동"
    avro = make_format("avro", dataset)
    assert avro.decode(avro.encode(rows[1])) == rows[1]
    with pytest.raises(ConfigError, match="protobuf format needs a schema"):
        make_format("protobuf", dataset)


def test_dataset_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        open_dataset(str(tmp_path / "nope.csv"))
    with pytest.raises(ConfigError, match="expected purchases, a .csv file or 'images DIR'"):
        open_dataset("parquet")
    with pytest.raises(ConfigError, match="is not a directory with files"):
        open_dataset(f"images {tmp_path / 'none'}")


def test_records_file_round_trip(tmp_path):
    values = [b"", b"a", bytes(range(256)) * 10, "홍".encode()]
    written = write_records(tmp_path / "r.bin", values)
    assert (written.records, written.payload_bytes, written.largest) == (4, sum(map(len, values)), 2560)
    assert list(read_records(tmp_path / "r.bin")) == values


@pytest.mark.parametrize("name", ["json", "protobuf", "avro"])
def test_fragment_encoding_decodes_to_the_same_rows_as_encoding_dicts(name, tmp_path):
    rows = 2 * POOL + 100  # three pool cycles, the last one partial
    pools = PurchasePools(rows)
    encoder, fmt = PurchaseEncoder(name, pools), make_format(name, open_dataset("purchases"))
    written = write_blocks(tmp_path / "r.bin", (encoder.encode_block(lo, hi) for lo, hi in blocks(0, rows)))
    values = list(read_records(tmp_path / "r.bin"))
    expected = pools.rows(0, rows)
    assert written.records == len(values) == rows and written.payload_bytes == sum(map(len, values))
    assert any(row["receive_tm"] is None for row in expected)
    for i in range(0, rows, 37):
        assert fmt.decode(values[i]) == expected[i]
        assert len(values[i]) == len(fmt.encode(expected[i]))  # the same bytes on the wire, field order aside
    assert pools.row(rows - 1) == expected[-1]


def test_blocks_never_cross_a_pool_cycle():
    assert list(blocks(0, 3)) == [(0, 3)]
    assert list(blocks(POOL - 2, POOL + 5)) == [(POOL - 2, POOL), (POOL, POOL + 5)]
    assert list(blocks(0, 2 * POOL, size=POOL // 2)) == [(k * POOL // 2, (k + 1) * POOL // 2) for k in range(4)]


def test_bulk_avro_customers_are_byte_for_byte_fastavros():
    from kafkabench.formats.codecs import CUSTOMER_FIELDS, _avro_customers, _avro_fragments

    customers = PurchasePools(40_000).customers + [("1.2.3.4", 12, "김" * 30), ("::1", 99_999_999, "")]
    assert _avro_customers(customers) == _avro_fragments(CUSTOMER_FIELDS, [dict(zip(CUSTOMER_FIELDS, c)) for c in customers])
    assert _avro_customers(customers[:-2]) == _avro_fragments(CUSTOMER_FIELDS, [dict(zip(CUSTOMER_FIELDS, c)) for c in customers[:-2]])
