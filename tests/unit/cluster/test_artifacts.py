import hashlib
import os
import threading
from pathlib import Path

import pytest

from kafkabench.cluster.artifacts import Jar, JarCache, Manifest, packaged_manifest, urllib_fetch
from kafkabench.errors import ArtifactError, ConfigError


def make_repo(root: Path, files: dict[str, bytes]) -> Manifest:
    """A local Maven-layout repository served through file:// URLs, and its manifest."""
    jars = []
    for artifact, content in files.items():
        jar = Jar("org.example", artifact, "1.0", hashlib.sha256(content).hexdigest(), len(content))
        target = root / "org/example" / artifact / "1.0" / jar.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        jars.append(jar)
    return Manifest("9.9.9", root.as_uri(), tuple(jars))


class CountingFetch:
    def __init__(self):
        self.urls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, url, dest):
        with self.lock:
            self.urls.append(url)
        urllib_fetch(url, dest)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"alpha": b"A" * 1000, "beta": os.urandom(5000)})


def test_downloads_verifies_and_returns_classpath(tmp_path, repo):
    fetch = CountingFetch()
    cache = JarCache(repo, cache_dir=tmp_path / "cache", fetch=fetch)
    paths = cache.ensure()
    assert [p.name for p in paths] == ["alpha-1.0.jar", "beta-1.0.jar"]
    assert paths[0].read_bytes() == b"A" * 1000
    assert len(fetch.urls) == 2
    assert not list(cache.directory.glob("*.part"))


def test_second_ensure_fetches_nothing(tmp_path, repo):
    fetch = CountingFetch()
    JarCache(repo, cache_dir=tmp_path / "cache", fetch=fetch).ensure()
    JarCache(repo, cache_dir=tmp_path / "cache", fetch=fetch).ensure()
    assert len(fetch.urls) == 2


def test_corrupt_file_is_fetched_again(tmp_path, repo):
    fetch = CountingFetch()
    cache = JarCache(repo, cache_dir=tmp_path / "cache", fetch=fetch)
    alpha = cache.ensure()[0]
    alpha.write_bytes(b"A" * 999 + b"X")  # same size, different content
    cache.ensure()
    assert alpha.read_bytes() == b"A" * 1000
    assert fetch.urls[-1].endswith("alpha-1.0.jar") and len(fetch.urls) == 3


def test_checksum_mismatch_is_an_error_and_leaves_nothing(tmp_path, repo):
    (Path(repo.repository.removeprefix("file://")) / "org/example/beta/1.0/beta-1.0.jar").write_bytes(b"tampered")
    cache = JarCache(repo, cache_dir=tmp_path / "cache")
    with pytest.raises(ArtifactError, match="checksum mismatch for org.example:beta:1.0"):
        cache.ensure()
    assert not (cache.directory / "beta-1.0.jar").exists()
    assert not list(cache.directory.glob("*.part"))


def test_unreachable_repository_says_what_to_do(tmp_path, repo):
    cache = JarCache(repo, cache_dir=tmp_path / "cache", repository="http://127.0.0.1:9")
    with pytest.raises(ArtifactError, match="cannot reach 127.0.0.1:9.*KAFKABENCH_MAVEN_REPO"):
        cache.ensure()


def test_missing_artifact_is_reported_with_its_url(tmp_path, repo):
    cache = JarCache(repo, cache_dir=tmp_path / "cache", repository=(tmp_path / "empty").as_uri())
    with pytest.raises(ArtifactError, match="empty/org/example/alpha/1.0/alpha-1.0.jar"):
        cache.ensure()


def test_concurrent_ensures_download_each_file_once(tmp_path, repo):
    fetch = CountingFetch()
    errors = []

    def run():
        try:
            JarCache(repo, cache_dir=tmp_path / "cache", fetch=fetch).ensure()
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert sorted(fetch.urls) == sorted(set(fetch.urls)) and len(fetch.urls) == 2


def test_environment_overrides_cache_and_repository(tmp_path, monkeypatch, repo):
    monkeypatch.setenv("KAFKABENCH_CACHE", str(tmp_path / "envcache"))
    monkeypatch.setenv("KAFKABENCH_MAVEN_REPO", "https://mirror.example/maven2")
    cache = JarCache(repo)
    assert cache.directory == tmp_path / "envcache" / "kafka-9.9.9"
    assert cache.repository == "https://mirror.example/maven2"


def test_the_default_manifest_pins_the_newest_kafka_with_hashes():
    from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION, kafka_versions

    manifest = packaged_manifest()
    assert manifest.kafka_version == DEFAULT_KAFKA_VERSION == kafka_versions()[-1] == "4.4.0"
    coordinates = {jar.coordinates for jar in manifest.jars}
    for needed in ("org.apache.kafka:kafka_2.13", "org.apache.kafka:kafka-clients", "org.apache.kafka:kafka-tools",
                   "org.scala-lang:scala-library", "org.apache.logging.log4j:log4j-slf4j-impl"):
        assert any(c.startswith(needed + ":") for c in coordinates), needed
    assert all(len(jar.sha256) == 64 and jar.size > 0 for jar in manifest.jars)
    assert not any("connect-runtime" in c or "jetty" in c for c in coordinates)
    assert Jar("org.apache.kafka", "kafka-clients", "4.1.2", "", 1).url("https://repo1.maven.org/maven2/") == (
        "https://repo1.maven.org/maven2/org/apache/kafka/kafka-clients/4.1.2/kafka-clients-4.1.2.jar")


def test_an_agent_is_downloaded_and_verified_with_the_jars_but_kept_off_the_classpath(tmp_path, repo):
    agent = Jar("org.example", "agent", "1.0", hashlib.sha256(b"agent").hexdigest(), 5)
    target = Path(repo.repository.removeprefix("file://")) / "org/example/agent/1.0" / agent.filename
    target.parent.mkdir(parents=True)
    target.write_bytes(b"agent")
    fetch = CountingFetch()
    cache = JarCache(Manifest(repo.kafka_version, repo.repository, repo.jars, (agent,)), cache_dir=tmp_path / "cache",
                     fetch=fetch)
    assert [p.name for p in cache.ensure()] == ["alpha-1.0.jar", "beta-1.0.jar"]
    assert cache.agent("agent").read_bytes() == b"agent" and len(fetch.urls) == 3
    with pytest.raises(ArtifactError, match="pins no agent nonesuch"):
        cache.agent("nonesuch")


def test_packaged_manifest_pins_the_jmx_exporter_agent():
    (agent,) = packaged_manifest().agents
    assert agent.coordinates == "io.prometheus.jmx:jmx_prometheus_javaagent:1.0.1" and len(agent.sha256) == 64


def test_every_pinned_kafka_version_has_its_jars_and_its_brokers_setting_names():
    from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION, kafka_versions

    versions = kafka_versions()
    assert versions[0] == "4.0.2" and versions[-1] == "4.4.0" and DEFAULT_KAFKA_VERSION in versions
    for version in versions:
        manifest = packaged_manifest(version)
        assert manifest.kafka_version == version
        assert any(jar.artifact == "kafka_2.13" and jar.version == version for jar in manifest.jars)
        assert {"num.io.threads", "socket.send.buffer.bytes", "log.flush.interval.messages"} <= set(manifest.broker_settings)
        assert (manifest.broker_settings["num.io.threads"], manifest.broker_settings["log.dirs"]) == ("8", "")
        assert [agent.artifact for agent in manifest.agents] == ["jmx_prometheus_javaagent"]
    with pytest.raises(ConfigError, match="Kafka 9.9.9: kafkabench pins no such version"):
        packaged_manifest("9.9.9")
