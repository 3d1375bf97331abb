"""Screenshots of the report's and explore's sections (docs/screenshots), headless Chromium.

Made from a report and an explore page written first:

    anonlab report adult.csv.gz --job job.yaml --classify income --contingency age,income \
        --sampling-fraction 0.01 -o /tmp/rc.html
    anonlab explore adult.csv.gz --job job.yaml --k 2,5,10,20 \
        --algorithms optimal,top_down,murakami_uno,privacyfrost2 -o /tmp/ex/explore.html
    .venv/bin/python scripts/screenshots.py

(job.yaml: age with hierarchy: auto, education with auto: {grouping: frequency}, sex, race,
marital-status; income sensitive; k = 5; suppression 0.05.) Needs Playwright and Chromium.
"""

import shutil
from pathlib import Path

from playwright.sync_api import sync_playwright

out = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
pages = {
    "/tmp/rc.html": [
        ("h3#utility", "report_utility.png", 1800),
        ("h3#classification", "report_classification.png", 400),
        ("div[data-disclosure]", "report_attribute_disclosure.png", 700),
        ("text=Re-identification risk before and after", "report_risk_before_after.png", 500),
        ("text=Riskiest records by SUDA score", "report_suda.png", 600),
        ("text=Attacker models", "report_attacker_models.png", 700),
    ],
    "/tmp/ex/explore.html": [("h3#frontier", "explore_frontier.png", 1500)],
}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    for url, shots in pages.items():
        page.goto(f"file://{url}")
        for selector, name, height in shots:
            el = page.locator(selector).first
            box = el.bounding_box()
            if box is None:
                print("missing", selector)
                continue
            page.screenshot(
                path=str(out / name),
                full_page=True,
                clip={"x": 0, "y": max(box["y"] - 10, 0), "width": 1200, "height": height},
            )
            print("wrote", name)
    browser.close()
