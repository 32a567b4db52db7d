"""The taxonomy's error, apart from its models: the command catches it without building them."""

from curriculab.trajectory.errors import CurriculabError


class TaxonomyError(CurriculabError, ValueError):
    """A taxonomy file that cannot be used; the message names the file, the entry and the fix."""
