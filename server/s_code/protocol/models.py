"""The base of every request and result model, and the validation of raw params."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from s_code.protocol.errors import SCodeError, invalid_params

M = TypeVar("M", bound=BaseModel)


class Args(BaseModel):
    """Request params: unknown fields are refused, values are not coerced across types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Result(BaseModel):
    """A reply: dumped with ``model_dump(mode="json", by_alias=True, exclude_none=True)``."""

    model_config = ConfigDict(extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _field_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "<params>"


def parse_params(model: type[M], raw: Any) -> M:
    """Validate raw JSON params against ``model``; the first error names its field path."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise invalid_params(f"params must be an object, not {type(raw).__name__}", "<params>")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc) from None


def validation_error(exc: ValidationError) -> SCodeError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    path = _field_path(tuple(first["loc"]))
    if first["type"] == "extra_forbidden":
        message = f"unknown field {path!r}"
    else:
        message = f"{path}: {first['msg']}"
    details = [{"field": _field_path(tuple(e["loc"])), "message": e["msg"]} for e in errors[:10]]
    return invalid_params(message, path, errors=details)
