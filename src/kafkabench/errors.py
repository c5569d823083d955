"""One exception tree. Every message is one line that says what failed and what to do."""


class KafkabenchError(Exception):
    """Root of every error kafkabench raises on purpose."""


class ArtifactError(KafkabenchError):
    """Kafka jars could not be fetched or verified."""


class JavaNotFoundError(KafkabenchError):
    """No usable Java runtime."""


class ClusterError(KafkabenchError):
    """The embedded cluster could not be started, inspected or stopped."""


class ConfigError(KafkabenchError):
    """A setting given by the user is unknown or invalid."""


class KafkaAdminError(KafkabenchError):
    """An admin request to the cluster failed."""


class WaitTimeout(KafkabenchError):
    """A bounded wait ran out of time."""


class ConnectionProblem(KafkabenchError):
    """A connection to the cluster cannot work (unreachable, refused login, untrusted or mismatched TLS)."""
