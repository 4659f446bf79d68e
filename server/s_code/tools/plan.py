"""update_plan: the agent's step list, kept per workspace and announced to the editor."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from s_code.approvals.caller import current
from s_code.protocol import methods
from s_code.protocol.errors import invalid_params
from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef

PLAN_KEY = "plan"


class PlanStep(Args):
    step: str = Field(min_length=1, max_length=500)
    status: Literal["pending", "in_progress", "completed"]


class UpdatePlanArgs(Args):
    plan: list[PlanStep] = Field(max_length=100, description="The whole plan, in order.")
    explanation: str | None = Field(None, max_length=2000, description="Why the plan changed.")

    @model_validator(mode="after")
    def _one_in_progress(self) -> UpdatePlanArgs:
        active = [i for i, s in enumerate(self.plan) if s.status == "in_progress"]
        if len(active) > 1:
            raise invalid_params("at most one step may be in_progress", f"plan.{active[1]}.status")
        return self


class PlanStepOut(Result):
    step: str
    status: Literal["pending", "in_progress", "completed"]


class UpdatePlanResult(Result):
    plan: list[PlanStepOut]
    explanation: str | None = None
    completed: int
    total: int


async def _update_plan(session: Session, args: UpdatePlanArgs) -> UpdatePlanResult:
    result = UpdatePlanResult(
        plan=[PlanStepOut(step=s.step, status=s.status) for s in args.plan],
        explanation=args.explanation,
        completed=sum(s.status == "completed" for s in args.plan),
        total=len(args.plan),
    )
    wire = result.to_wire()
    caller = current()
    if caller is not None:  # an attached agent's plan is its own: the editor's agent's stays
        session.notify(methods.PLAN_UPDATED, {**wire, "agent": caller.name, "agentId": caller.id})
        return result
    session.plan = wire
    if session.store is not None:
        session.store.put(PLAN_KEY, wire)
    session.notify(methods.PLAN_UPDATED, wire)
    return result


TOOLS = (
    ToolDef(
        name="update_plan",
        title="Update the plan",
        idempotent=True,
        args=UpdatePlanArgs,
        result=UpdatePlanResult,
        handler=_update_plan,
        read_only=True,
        description=(
            "Replace the task plan: an ordered list of steps, each pending, in_progress (at most "
            "one) or completed. The editor shows it to the user."
        ),
    ),
)
