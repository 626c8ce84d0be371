"""Small fixed results the graph-display tests draw: monthly counts broken out by category, two metrics
per month, steps of a funnel, points of a scatter, slices of a pie."""
from __future__ import annotations

from .support import col, result

MONTH = col("CREATED_AT", "type/DateTime", display_name="Created At", unit="month", source="breakout")
CATEGORY = col("CATEGORY", "type/Text", display_name="Category", source="breakout")
COUNT = col("count", "type/BigInteger", display_name="Count", source="aggregation")
TOTAL = col("sum", "type/Float", display_name="Sum of Total", source="aggregation")
MONTHS = [f"2024-{m:02d}-01T00:00:00" for m in range(1, 5)]
CATEGORIES = ["Gadget", "Widget", "Gizmo"]

# Counts by month and category: Gadget 10, 14, 18, 22; Widget 20, 24, 28, 32; Gizmo 5, 9, 13, 17.
BY_CATEGORY = result([MONTH, CATEGORY, COUNT],
                     [[month, category, base + 4 * m] for m, month in enumerate(MONTHS)
                      for category, base in zip(CATEGORIES, (10, 20, 5))])
# Count and total by month: counts 120, 150, 90, 180 and totals 2400.5, 3100, 1800, 4000.25.
TWO_METRICS = result([MONTH, COUNT, TOTAL], [[MONTHS[0], 120, 2400.5], [MONTHS[1], 150, 3100.0],
                                             [MONTHS[2], 90, 1800.0], [MONTHS[3], 180, 4000.25]])
BY_MONTH = result([MONTH, COUNT], [[month, count] for month, count in zip(MONTHS, (120, 150, 90, 180))])

STEP = col("STEP", "type/Text", display_name="Step", source="breakout")
FUNNEL = result([STEP, COUNT], [["Visits", 1000], ["Signups", 400], ["Trials", 250], ["Paid", 100]])
# Waterfall: +1000, -300, +500, -200 -> total 1000.
CHANGES = result([STEP, COUNT], [["Start", 1000], ["Refunds", -300], ["Upsell", 500], ["Churn", -200]])

SLICES = result([CATEGORY, COUNT], [["Widget", 500], ["Gadget", 300], ["Gizmo", 150], ["Doohickey", 30],
                                    ["Thing", 12], ["Bit", 8]])

AGE = col("AGE", "type/Integer", display_name="Age")
INCOME = col("INCOME", "type/Float", display_name="Income")
SIZE = col("SIZE", "type/Integer", display_name="Size")
SEGMENT = col("SEGMENT", "type/Text", display_name="Segment")
POINTS = result([AGE, INCOME, SIZE, SEGMENT],
                [[20 + 5 * i, 1000.0 * i + (300 if i % 2 else 0), 1 + (i * 7) % 10, "AB"[i % 2]] for i in range(8)])


def card(display: str, **settings) -> dict:
    return {"display": display, "visualization_settings": settings}
