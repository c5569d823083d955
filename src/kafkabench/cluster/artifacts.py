"""The pinned Apache Kafka jars (and the Java agents the brokers run with: Prometheus's JMX exporter): a manifest
shipped in the package, a verified download cache.

Jars are fetched once from Maven Central (or the mirror in KAFKABENCH_MAVEN_REPO) into the cache
directory (KAFKABENCH_CACHE, default: the user's cache dir), each checked against its sha256 before it
is moved into place. A file lock makes concurrent processes safe; a verification record (size and
mtime of each checked file) keeps the already-set-up path fast while a changed or truncated file is
hashed again and re-fetched if it no longer matches.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Callable

import platformdirs
from filelock import FileLock, Timeout

from kafkabench.errors import ArtifactError, ConfigError

Fetch = Callable[[str, Path], None]

DEFAULT_KAFKA_VERSION = "4.4.0"
DOWNLOAD_TIMEOUT_S = 60
LOCK_TIMEOUT_S = 600  # another process may be downloading ~45 MB on a slow link
PARALLEL_DOWNLOADS = 8


@dataclass(frozen=True)
class Jar:
    group: str
    artifact: str
    version: str
    sha256: str
    size: int

    @property
    def filename(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    def url(self, repository: str) -> str:
        return f"{repository.rstrip('/')}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.filename}"


@dataclass(frozen=True)
class Manifest:
    kafka_version: str
    repository: str
    jars: tuple[Jar, ...]  # the classpath
    agents: tuple[Jar, ...] = ()  # -javaagent jars, never on the classpath
    broker_settings: dict[str, str] = field(default_factory=dict)  # its broker's settings and defaults ("": none)

    @classmethod
    def from_dict(cls, data: dict) -> Manifest:
        def jar(entry: dict) -> Jar:
            group, artifact, version = entry["coordinates"].split(":")
            return Jar(group, artifact, version, entry["sha256"], entry["size"])

        jars, agents = tuple(map(jar, data["jars"])), tuple(map(jar, data.get("agents", [])))
        names = [jar.filename for jar in jars + agents]
        if len(set(names)) != len(names):
            raise ArtifactError("Kafka manifest lists two jars with the same file name")
        return cls(data["kafka_version"], data["repository"], jars, agents, dict(data.get("broker_settings", {})))

    @property
    def files(self) -> tuple[Jar, ...]:
        """Everything to download and verify."""
        return self.jars + self.agents


@cache
def kafka_versions() -> tuple[str, ...]:
    """The Kafka versions kafkabench pins, oldest first."""
    names = [entry.name for entry in resources.files("kafkabench.cluster").joinpath("manifests").iterdir()]
    versions = [name.removeprefix("kafka-").removesuffix(".json") for name in names if name.startswith("kafka-")]
    return tuple(sorted(versions, key=lambda version: tuple(int(part) for part in version.split("."))))


@cache
def release(version: str) -> tuple[int, ...]:
    """A Kafka version in the order of releases: "4.10.0" after "4.4.0"."""
    return tuple(int(part) for part in version.split("."))


def packaged_manifest(version: str | None = None) -> Manifest:
    """The pinned manifest of `version` (default: DEFAULT_KAFKA_VERSION), read once."""
    version = version or DEFAULT_KAFKA_VERSION
    if version not in kafka_versions():
        raise ConfigError(f"Kafka {version}: kafkabench pins no such version; it has {', '.join(kafka_versions())}")
    text = resources.files("kafkabench.cluster").joinpath("manifests", f"kafka-{version}.json").read_text()
    return Manifest.from_dict(json.loads(text))


def default_cache_dir() -> Path:
    return Path(os.environ.get("KAFKABENCH_CACHE") or platformdirs.user_cache_dir("kafkabench"))


def default_repository(manifest: Manifest) -> str:
    return os.environ.get("KAFKABENCH_MAVEN_REPO") or manifest.repository


def urllib_fetch(url: str, dest: Path) -> None:
    """Download `url` (http(s) or file) to `dest`, mapping network failures to ArtifactError."""
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, dest.open("wb") as out:
            shutil.copyfileobj(response, out, length=1 << 20)
    except urllib.error.HTTPError as exc:
        raise ArtifactError(f"download of {url} failed: HTTP {exc.code}; is the repository a Maven mirror?") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ArtifactError(
            f"cannot reach {url.split('/')[2] or url}: {reason}; check the network or proxy, "
            "or set KAFKABENCH_MAVEN_REPO to a reachable Maven mirror"
        ) from exc


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class JarCache:
    """The cache directory holding one Kafka version's jars."""

    def __init__(
        self,
        manifest: Manifest | None = None,
        cache_dir: Path | None = None,
        repository: str | None = None,
        fetch: Fetch = urllib_fetch,
    ) -> None:
        self.manifest = manifest or packaged_manifest()
        self.directory = (cache_dir or default_cache_dir()) / f"kafka-{self.manifest.kafka_version}"
        self.repository = repository or default_repository(self.manifest)
        self._fetch = fetch
        self._record_path = self.directory / "verified.json"

    def ensure(self) -> list[Path]:
        """Return the classpath entries, downloading and verifying whatever is missing or damaged."""
        if self._all_verified():
            return self.paths()
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(self.directory / ".lock", timeout=LOCK_TIMEOUT_S):
                self._fill()
        except Timeout as exc:
            raise ArtifactError(
                f"waited {LOCK_TIMEOUT_S} s for another kafkabench process to finish downloading into "
                f"{self.directory}; if none is running, delete {self.directory / '.lock'}"
            ) from exc
        return self.paths()

    def paths(self) -> list[Path]:
        return [self.directory / jar.filename for jar in self.manifest.jars]

    def agent(self, artifact: str) -> Path:
        """The verified -javaagent jar named `artifact` (ensure() first)."""
        for jar in self.manifest.agents:
            if jar.artifact == artifact:
                return self.directory / jar.filename
        raise ArtifactError(f"the Kafka manifest pins no agent {artifact}")

    def _fill(self) -> None:
        record = self._read_record()
        missing = [jar for jar in self.manifest.files if not self._is_valid(jar, record)]
        if missing:
            with ThreadPoolExecutor(PARALLEL_DOWNLOADS) as pool:
                list(pool.map(self._download, missing))
        self._write_record()

    def _download(self, jar: Jar) -> None:
        target = self.directory / jar.filename
        partial = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            self._fetch(jar.url(self.repository), partial)
            actual = sha256_of(partial)
            if actual != jar.sha256:
                raise ArtifactError(
                    f"checksum mismatch for {jar.coordinates} from {self.repository}: expected sha256 "
                    f"{jar.sha256[:16]}..., got {actual[:16]}...; the mirror serves a different file, "
                    "try again or point KAFKABENCH_MAVEN_REPO at Maven Central"
                )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)

    def _recorded(self, jar: Jar, record: dict) -> bool:
        try:
            stat = (self.directory / jar.filename).stat()
        except FileNotFoundError:
            return False
        return record.get(jar.filename) == [stat.st_size, stat.st_mtime_ns]

    def _is_valid(self, jar: Jar, record: dict) -> bool:
        if self._recorded(jar, record):
            return True
        path = self.directory / jar.filename
        return path.is_file() and path.stat().st_size == jar.size and sha256_of(path) == jar.sha256

    def _all_verified(self) -> bool:
        record = self._read_record()
        return all(self._recorded(jar, record) for jar in self.manifest.files)

    def _read_record(self) -> dict:
        try:
            return json.loads(self._record_path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def _write_record(self) -> None:
        record = {}
        for jar in self.manifest.files:
            stat = (self.directory / jar.filename).stat()
            record[jar.filename] = [stat.st_size, stat.st_mtime_ns]
        tmp = self._record_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, indent=0))
        os.replace(tmp, self._record_path)
