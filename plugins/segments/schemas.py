"""Request bodies and parameters of /api/segment: the shapes every named definition shares."""
from __future__ import annotations

from core.definition_params import DefinitionChanges as SegmentChanges  # noqa: F401
from core.definition_params import DefinitionId as SegmentId  # noqa: F401
from core.definition_params import NewDefinition as NewSegment  # noqa: F401
from core.definition_params import Revert, RevisionMessage  # noqa: F401
