"""The dashboard editor in headless Chromium (tests/plugins/sharing/browser.py): a two-tab dashboard built
from three saved questions and a text card, a date and a category filter wired to every card (the second
and third by the editor's same-column suggestion), a card resized and moved with the keyboard (and the
move announced), the chart given a goal line in its visualization settings panel, saved, and found as
saved on the dashboard page and again in the editor; no script error on the way, and axe-core finds no
serious or critical violation in either theme, wide or narrow.

Skipped, naming the package, when Debian's `chromium` is not installed (`make test-setup`)."""
from __future__ import annotations

import pytest

from tests.plugins.app.test_dashboard_browser import go, set_value, settle, signed_in, wait_for, width
from tests.plugins.app.test_dashboard_pages import build_shop, ok
from tests.plugins.sharing.browser import Browser, Server, chromium_path
from tests.plugins.sharing.test_pages_browser import press, serious_violations

pytestmark = [pytest.mark.skipif(chromium_path() is None, reason="the browser tests need Debian's chromium package "
                                                                 "(apt-get install chromium, or make test-setup)"),
              pytest.mark.xdist_group("app-dashboard-edit-browser")]

KEYS = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40}


def key(browser, name: str, shift: bool = False) -> None:
    """A real key press on the focused element, Shift held or not; then the editor's answer drawn."""
    modifiers = 8 if shift else 0
    for kind in ("rawKeyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", type=kind, key=name, code=name, windowsVirtualKeyCode=KEYS[name],
                     modifiers=modifiers)
    settle(browser)


def drag(browser, selector: str, dx: float, dy: float) -> None:
    """A mouse drag of the element from its middle by (dx, dy) pixels; then the editor's answer drawn."""
    browser.evaluate(f"document.querySelector({selector!r}).scrollIntoView({{block: 'center'}})")
    x, y = browser.evaluate(f"(r => [r.left + r.width / 2, r.top + r.height / 2])"
                            f"(document.querySelector({selector!r}).getBoundingClientRect())")
    browser.send("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
    for step in (0.5, 1):
        browser.send("Input.dispatchMouseEvent", type="mouseMoved", x=x + dx * step, y=y + dy * step, button="left")
    browser.send("Input.dispatchMouseEvent", type="mouseReleased", x=x + dx, y=y + dy, button="left", clickCount=1)
    settle(browser)


def click(browser, selector: str) -> None:
    wait_for(browser, f"!!document.querySelector({selector!r})")
    browser.evaluate(f"document.querySelector({selector!r}).click()")
    settle(browser)


def two_tabs_with_the_listing_on_the_second(browser, shop: dict) -> None:
    """In the editor: a second tab, the tabs named Overview and Details, the invoice list moved onto
    Details (checked in the draft)."""
    click(browser, "#dashedit-add-tab")
    first, second = (t["id"] for t in draft(browser)["tabs"])
    click(browser, f"button[value='tab:{first}']")
    listing = dashcard_of(browser, shop["listing"])["id"]
    set_value(browser, f"#totab-{listing}", str(second))
    set_value(browser, f"#dashedit-tabname-{first}", "Overview")
    set_value(browser, f"#dashedit-tabname-{second}", "Details")
    click(browser, f"button[value='to-tab:{listing}']")
    assert dashcard_of(browser, shop["listing"])["dashboard_tab_id"] == second


def goal_line_on(browser, card_id: int) -> None:
    """In the editor: the card's visualization settings opened by its button, a goal line at 40 named
    Target set there; the panel's preview draws it and the draft keeps it as the card's override alone."""
    click(browser, f"#vizopen-{dashcard_of(browser, card_id)['id']}")
    wait_for(browser, "document.activeElement.id === 'dashedit-viz-title'")  # the keyboard is taken there
    for selector, value in (("#viz-goal-value", "40"), ("#viz-goal-label", "Target")):
        set_value(browser, selector, value)
        settle(browser)
    click(browser, "#viz-show-goal")
    wait_for(browser, "[...document.querySelectorAll('.dashedit-viz-preview svg text')].some(t => t.textContent === 'Target')")
    assert {k: v for k, v in dashcard_of(browser, card_id)["visualization_settings"].items() if k.startswith("graph.")} == {
        "graph.show_goal": True, "graph.goal_value": 40, "graph.goal_label": "Target"}


def draft(browser) -> dict:
    return browser.evaluate("JSON.parse(document.querySelector('input[name=draft]').value)")


def dashcard_of(browser, card_id: int) -> dict:
    return next(d for d in draft(browser)["dashcards"] if d["card_id"] == card_id)


@pytest.fixture
def browser():
    with Browser(chromium_path(), 1400, 900) as opened:
        opened.watch_errors()
        yield opened


def test_a_two_tab_dashboard_is_built_filtered_laid_out_by_keyboard_and_saved(app, admin, browser):
    shop = build_shop(app, admin)
    made = ok(admin.post("/api/dashboard", json={"name": "Built in a browser"}))
    path = f"/dashboard/{made['id']}-built-in-a-browser"
    with Server(app) as server:
        signed_in(app, browser, server)
        go(browser, server.url + path)
        click(browser, f"a[href='{path}/edit']")
        wait_for(browser, "location.pathname.endsWith('/edit')")
        settle(browser)
        wait_for(browser, "document.querySelectorAll('#dashedit-picked button').length >= 3")

        # Three questions from the picker (the third found by typing), and a text card.
        click(browser, f"button[value='add-card:{shop['chart']}']")
        click(browser, f"button[value='add-card:{shop['total']}']")
        browser.evaluate("document.querySelector('#dashedit-q').focus()")
        browser.send("Input.insertText", text="Invoice")
        wait_for(browser, "![...document.querySelectorAll('#dashedit-picked .picked-name')].some(n => n.textContent === 'Revenue by city')")
        click(browser, f"button[value='add-card:{shop['listing']}']")
        # Each question is drawn at its size, as on the dashboard.
        wait_for(browser, "document.querySelector('.dashedit-preview .scalar')?.textContent === '23.5'")
        assert browser.evaluate("document.querySelectorAll('.dashedit-preview .chart svg').length") == 1
        click(browser, "button[value='add-virtual:text']")
        text_card = draft(browser)["dashcards"][-1]["id"]
        set_value(browser, f"#text-{text_card}", "Figures in **EUR**")

        # Enter in a field applies what was typed and adds nothing (the form's first button is "apply").
        count = len(draft(browser)["dashcards"])
        browser.evaluate("(e => { e.focus(); e.setSelectionRange(e.value.length, e.value.length); })"
                         "(document.querySelector('#dashedit-name'))")
        browser.send("Input.insertText", text="!")
        press(browser, "Enter")
        settle(browser)
        assert draft(browser)["name"] == "Built in a browser!" and len(draft(browser)["dashcards"]) == count

        # A second tab, the invoice list moved onto it, the tabs named.
        two_tabs_with_the_listing_on_the_second(browser, shop)
        assert [t["name"] for t in draft(browser)["tabs"]] == ["Overview", "Details"]

        # A date filter and a category filter, each wired to one card, then to the others by the suggestion.
        chart = dashcard_of(browser, shop["chart"])["id"]
        for kind, column in (("date", "Created At"), ("string", "Customer → City")):
            set_value(browser, "#dashedit-filter-kind", kind)
            click(browser, "#dashedit-add-filter")
            pid = draft(browser)["parameters"][-1]["id"]
            value = browser.evaluate(f"[...document.querySelector('#wire-{pid}-{chart}').options]"
                                     f".find(o => o.textContent === {column!r}).value")
            set_value(browser, f"#wire-{pid}-{chart}", value)
            settle(browser)
            click(browser, f"button[value='autowire:{pid}']")
            wired = [d for d in draft(browser)["dashcards"] if any(m["parameter_id"] == pid for m in d["parameter_mappings"])]
            assert sorted(d["card_id"] for d in wired) == sorted([shop["chart"], shop["total"], shop["listing"]])
        assert serious_violations(browser) == []

        # The number, by keyboard: two columns wider, one row taller, then three columns right.
        total = dashcard_of(browser, shop["total"])
        assert (total["col"], total["size_x"], total["size_y"]) == (0, 6, 3)
        browser.evaluate(f"document.querySelector('#move-{total['id']}').focus()")
        key(browser, "ArrowRight", shift=True)
        key(browser, "ArrowRight", shift=True)
        key(browser, "ArrowDown", shift=True)
        for _ in range(3):
            key(browser, "ArrowRight")
        assert browser.evaluate("document.activeElement.id") == f"move-{total['id']}"  # the keyboard stays on it
        assert browser.evaluate("document.querySelector('.dashedit-preview .scalar')?.textContent") == "23.5"
        moved = dashcard_of(browser, shop["total"])
        assert (moved["col"], moved["size_x"], moved["size_y"]) == (3, 8, 4)
        assert browser.evaluate("document.querySelector('#dashedit-status').textContent") == (
            "Invoice total: column 4, row 7, 8 wide, 4 tall.")
        box = browser.evaluate(f"(r => [r.left, r.width])(document.querySelector('#move-{total['id']}')"
                               ".closest('.dashcard').getBoundingClientRect())")
        grid = browser.evaluate("(r => [r.left, r.width])(document.querySelector('.grid').getBoundingClientRect())")
        assert abs((box[0] - grid[0]) / grid[1] * 24 - 3) < 0.3 and abs(box[1] / grid[1] * 24 - 8) < 0.5

        # By pointer: the chart dragged two columns right by its handle, then one row taller by its corner.
        chart_id = dashcard_of(browser, shop["chart"])["id"]
        cell = browser.evaluate("(g => (g.getBoundingClientRect().width + parseFloat(getComputedStyle(g).columnGap)) / 24)"
                                "(document.querySelector('.grid'))")
        drag(browser, f"#move-{chart_id}", 2 * cell, 0)
        assert (dashcard_of(browser, shop["chart"])["col"], dashcard_of(browser, shop["chart"])["size_y"]) == (2, 6)
        drag(browser, f".dashcard:has(#move-{chart_id}) [data-resize]", 0, 60)
        assert dashcard_of(browser, shop["chart"])["size_y"] == 7

        # The chart's own look on this dashboard: a goal line set in its visualization settings.
        goal_line_on(browser, shop["chart"])

        # Narrow and dark (the settings panel open): still usable and readable.
        width(browser, 390, 844)
        assert browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert serious_violations(browser) == []
        width(browser, 1400)
        browser.evaluate("document.querySelector('[data-theme-toggle]').click()")
        assert serious_violations(browser) == []
        click(browser, "#dashedit-viz-close")  # and back to the card's button
        assert browser.evaluate("document.activeElement.id") == f"vizopen-{dashcard_of(browser, shop['chart'])['id']}"

        click(browser, "#dashedit-save")
        wait_for(browser, f"location.pathname === {path!r}")
        settle(browser)

    stored = ok(admin.get(f"/api/dashboard/{made['id']}"))
    assert stored["name"] == "Built in a browser!"
    tabs = {t["name"]: t["id"] for t in stored["tabs"]}
    assert list(tabs) == ["Overview", "Details"]
    by_card = {d["card_id"]: d for d in stored["dashcards"]}
    assert (by_card[shop["total"]]["col"], by_card[shop["total"]]["size_x"], by_card[shop["total"]]["size_y"]) == (3, 8, 4)
    assert by_card[shop["listing"]]["dashboard_tab_id"] == tabs["Details"]
    assert by_card[None]["visualization_settings"]["text"] == "Figures in **EUR**"
    assert by_card[shop["chart"]]["visualization_settings"]["graph.goal_label"] == "Target"
    assert [p["type"] for p in stored["parameters"]] == ["date/all-options", "string/="]
    for card_id in (shop["chart"], shop["total"], shop["listing"]):
        assert len(by_card[card_id]["parameter_mappings"]) == 2
    with Server(app) as server:
        signed_in(app, browser, server)
        go(browser, server.url + path)
        wait_for(browser, "document.querySelector('.markdown strong')?.textContent === 'EUR'")
        assert browser.evaluate("document.querySelector('.dashcard.col-4.w-8.h-4') !== null")
        assert browser.evaluate("[...document.querySelectorAll('.tabs a')].map(a => a.textContent).join()") == "Overview,Details"
        go(browser, server.url + path + "/edit")
        assert dashcard_of(browser, shop["total"])["size_x"] == 8
    assert browser.errors() == []
