"""How every benchmark prints a figure: one line per target, the measured ratio beside the target and
whether it is met, so that a maintainer reads the run without knowing each benchmark's internals."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A ratio and its bound: `at_most` for costs (time ratios), `at_least` for throughput ratios."""

    name: str
    ratio: float
    bound: float
    at_most: bool = True
    unit: str = "x"
    detail: str = ""

    @property
    def met(self) -> bool:
        return self.ratio <= self.bound if self.at_most else self.ratio >= self.bound

    def line(self) -> str:
        relation = "<=" if self.at_most else ">="
        verdict = "met" if self.met else "MISSED"
        text = f"{self.name:<58} {self.ratio:>10.3f}{self.unit}  target {relation} {self.bound:g}{self.unit}  {verdict}"
        return f"{text}  ({self.detail})" if self.detail else text


def report(targets: list[Target], title: str = "") -> bool:
    """Print the targets; True when every one is met."""
    if title:
        print(f"-- {title}")
    for target in targets:
        print(target.line(), flush=True)
    return all(target.met for target in targets)


def info(name: str, ratio: float, detail: str = "", unit: str = "x") -> None:
    """A figure the issue asks to see but sets no bound on: printed in the same columns, without a verdict."""
    text = f"{name:<58} {ratio:>10.3f}{unit}  (info, no target)"
    print(f"{text}  ({detail})" if detail else text, flush=True)
