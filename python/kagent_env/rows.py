"""What a prompt row of `kagent rollout` names, wherever a trainer hands it to its adapter, and
the one rule every adapter scores an episode by.

A row (agent/rollout's README has its layout) names its task and its answer format in several
places, because each trainer passes a different part of it to the environment:
  TRL       reset(**row): the whole row
  SkyRL     extras: the row's columns (reward_spec, extra_info, ...)
  verl      start_interaction(**extra_info["interaction_kwargs"])
  verifiers state["info"] (the row's extra_info), state["task"]
So the task is read from task_id, reward_spec/reward_model.ground_truth, extra_info.task_id,
interaction_kwargs' task_id (or problem), or the problem's name; the format from "format" at
the top level, in extra_info, interaction_kwargs or reward_spec. Places that disagree are an
error in the row, never a silent choice: a KernelBench answer opened as a cuda episode scores 0
("no ```cuda code block").
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Optional

FORMATS = ("cuda", "kernelbench")


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _places(row: dict) -> list[tuple[str, dict]]:
    """The row and the parts of it that may carry the task or the format, with their names."""
    extra = _dict(row.get("extra_info")) or _dict(row.get("info"))
    kwargs = _dict(row.get("interaction_kwargs")) or _dict(extra.get("interaction_kwargs"))
    return [("the row", row), ("extra_info", extra), ("interaction_kwargs", kwargs),
            ("reward_spec", _dict(row.get("reward_spec"))), ("reward_model", _dict(row.get("reward_model")))]


def _one(found: list[tuple[str, str]], what: str) -> Optional[str]:
    values = {v for _, v in found}
    if len(values) > 1:
        raise ValueError(f"the row names two {what}s: " + ", ".join(f"{where} {v!r}" for where, v in found))
    return found[0][1] if found else None


def format_of(row: dict) -> Optional[str]:
    """The row's answer format ("cuda" or "kernelbench"); None when it names none (the server's
    default then). ValueError when two places disagree or the value is not a format."""
    found = [(where, part["format"]) for where, part in _places(row) if part.get("format")]
    fmt = _one(found, "format")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"the row's format {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def task_of(row: dict) -> Optional[str]:
    """The task id `kagent serve` resolves: task_id, the ground truth, or the problem's name, in
    that order of places; ValueError when two places disagree."""
    found = []
    for where, part in _places(row):
        for key in ("task_id", "ground_truth", "problem"):
            value = part.get(key)
            if isinstance(value, str) and value:
                found.append((f"{where} {key}", value))
                break
    return _one(found, "task")


def best_reward(rewards: Iterable[Optional[float]]) -> Optional[float]:
    """An episode's score: the best of its steps' rewards. A step that was not scored (reward
    None: compiled, not run, on a --compile-only server) may have been the best, so with one the
    score is unknown: None, never 0. No step at all scores 0 (the model submitted nothing)."""
    rewards = list(rewards)
    if any(r is None for r in rewards):
        return None
    return max((float(r) for r in rewards), default=0.0)


def as_number(reward: Optional[float]) -> float:
    """None as NaN, for trainers whose reward must be a float (NaN: not scored; 0 would be a
    score)."""
    return math.nan if reward is None else float(reward)
