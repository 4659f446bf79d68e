"""The base of every request and result model, and the validation of raw params."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from s_code.protocol.errors import SCodeError, invalid_params
from s_code.protocol.incoming import current
from s_code.protocol.unicode import all_encodable, field_path, unencodable

M = TypeVar("M", bound=BaseModel)


class Args(BaseModel):
    """Request params: unknown fields are refused, values are not coerced across types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Result(BaseModel):
    """A reply: dumped with ``model_dump(mode="json", by_alias=True, exclude_none=True)``."""

    model_config = ConfigDict(extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def parse_params(model: type[M], raw: Any, *, check_text: bool = True) -> M:
    """Validate raw JSON params against ``model``; the first error names its field path."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise invalid_params(f"params must be an object, not {type(raw).__name__}", "<params>")
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc) from None
    # Lone surrogates are valid JSON escapes but not text: refuse them here, once, by field.
    # The transport may already know that the request holds none (no surrogate escape in it).
    incoming = current()
    clean = not check_text or (incoming is not None and incoming.text_clean)
    bad = None if clean or all_encodable(raw) else unencodable(raw, ())
    if bad is not None:
        raise invalid_params(
            f"{field_path(bad)}: the text has an unpaired UTF-16 surrogate (not valid Unicode)",
            field_path(bad),
        )
    return parsed


def validation_error(exc: ValidationError) -> SCodeError:
    errors = exc.errors(include_url=False, include_input=False)
    # An unknown field is usually a typo of a missing one: name the unknown field first.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    path = field_path(tuple(first["loc"]))
    if first["type"] == "extra_forbidden":
        message = f"unknown field {path!r}"
    else:
        message = f"{path}: {first['msg']}"
    details = [{"field": field_path(tuple(e["loc"])), "message": e["msg"]} for e in errors[:10]]
    return invalid_params(message, path, errors=details)
