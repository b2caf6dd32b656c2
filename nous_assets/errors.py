"""Named failures. The CLI turns these into one-line messages instead of tracebacks."""


class NousError(Exception):
    """Base class for errors a user can act on."""


class ConfigError(NousError):
    """A setting or the config file is malformed; the message names the file and key."""


class SchemaError(NousError):
    """The database schema is missing, newer than this build, or damaged."""


class InvalidEventError(NousError):
    """An event failed validation; nothing was written."""


class DatabaseMissingError(NousError):
    """The database does not exist yet; run ``nous init``."""
