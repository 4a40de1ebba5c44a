#!/usr/bin/python3
"""Drives `pgjq web` in Debian's headless Chromium (through chromedriver and python3-selenium).

web_browser_test.py admin URL FAILED_ID SCREENSHOT
    The page loads without console errors, shows the queue and the failed job, shows the job's payload as
    text without running the <script> and onerror handler it holds, and its retry button makes the job
    pending (the caller checks the database). Saves a screenshot.
web_browser_test.py observer URL FAILED_ID
    The page shows the job too, but its retry button is refused with the database's permission error.
web_browser_test.py workflow URL WORKFLOW_ID STEPS EDGES RUNNING_ID SCREENSHOT
    The workflow's graph shows one box per step in the state STEPS gives ({"name": "state", ...}, read from
    the database by the caller) and one arrow per dependency of EDGES ([["from", "to"], ...]); its table
    lists the same states and its error as text, and nothing its steps hold runs. Saves a screenshot of the
    workflow. Then the cancel button of workflow RUNNING_ID asks first: dismissed, nothing is sent; accepted,
    the workflow is cancelled (the caller checks the database).
Exits 1 with the reason on the first check that fails.
"""
import json
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait


def fail(why):
    print(f"browser test failed: {why}", file=sys.stderr)
    sys.exit(1)


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1700", f"--user-data-dir={profile}", "--no-first-run"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, what, condition, seconds=20):
    try:
        # The dashboard replaces its tables on every refresh, so an element found a moment ago can be gone.
        return WebDriverWait(driver, seconds, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition(d))
    except Exception:
        fail(f"{what} (waited {seconds} s); page text:\n{driver.find_element(By.TAG_NAME, 'body').text[:3000]}")


def refreshes(driver):
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed") or 0)


def button(driver, kind, action, item_id):
    """The button of a job (kind "job") or a workflow ("workflow") in its table, if shown."""
    found = driver.find_elements(
        By.CSS_SELECTOR, f'#{kind}s button[data-action="{action}"][data-{kind}="{item_id}"]')
    return found[0] if found else None


def job_button(driver, action, job_id):
    return button(driver, "job", action, job_id)


def workflow_button(driver, action, workflow_id):
    return button(driver, "workflow", action, workflow_id)


def click_button(driver, kind, action, item_id):
    """Finds and clicks the button in one step, so that a refresh between the two only means another try."""
    def clicked(d):
        found = button(d, kind, action, item_id)
        if found is None:
            return False
        found.click()
        return True
    wait(driver, f"a click on the {action} button of {kind} {item_id}", clicked)


def click_job_button(driver, action, job_id):
    click_button(driver, "job", action, job_id)


def click_workflow_button(driver, action, workflow_id):
    click_button(driver, "workflow", action, workflow_id)


def message(driver):
    box = driver.find_element(By.ID, "message")
    return box.text if box.is_displayed() else ""


def injected(driver):
    return driver.execute_script("return window.pgjqInjected === undefined ? null : window.pgjqInjected")


# The graph as drawn, read in one script so that a refresh cannot replace it halfway: each box's step,
# state, label and left edge, each arrow's ends, and the table's rows.
READ_GRAPH = """
const boxes = [...document.querySelectorAll('#workflow-graph svg g.step')];
return {
  boxes: boxes.map((b) => ({ step: b.dataset.step, state: b.dataset.state,
                             label: b.querySelector('text.state').textContent, x: b.getBoundingClientRect().x })),
  edges: [...document.querySelectorAll('#workflow-graph svg path.edge')].map((e) => [e.dataset.from, e.dataset.to]),
  rows: [...document.querySelectorAll('#workflow-steps tbody tr')].map((r) => [r.dataset.step, r.dataset.state]),
};
"""


def check_workflow(driver, workflow_id, steps, edges, running_id, screenshot):
    click_workflow_button(driver, "show", workflow_id)
    wait(driver, "the workflow's graph with every step in its state",
         lambda d: {b["step"]: b["state"] for b in d.execute_script(READ_GRAPH)["boxes"]} == steps)
    drawn = driver.execute_script(READ_GRAPH)
    if len(drawn["boxes"]) != len(steps):
        fail(f"the graph has {len(drawn['boxes'])} boxes for {len(steps)} steps")
    for box in drawn["boxes"]:
        if not box["label"].startswith(steps[box["step"]]):
            fail(f"step {box['step']}'s box says {box['label']!r}, not its state {steps[box['step']]}")
    if sorted(drawn["edges"]) != sorted(edges):
        fail(f"the graph's arrows {sorted(drawn['edges'])} are not the dependencies {sorted(edges)}")
    # The layers: a step stands right of every step it waits for.
    x = {box["step"]: box["x"] for box in drawn["boxes"]}
    for before, after in edges:
        if not x[before] < x[after]:
            fail(f"step {after} is not drawn right of {before}, which it waits for")
    if dict(drawn["rows"]) != steps or len(drawn["rows"]) != len(steps):
        fail(f"the steps' table {drawn['rows']} is not {steps}")
    table = driver.find_element(By.ID, "workflow-steps").text
    if "<script>" not in table or "onerror" not in table:
        fail(f"the failed step's error or a result is not shown as text: {table}")
    time.sleep(0.5)
    if injected(driver) is not None:
        fail(f"a step's text ran as a script (window.pgjqInjected = {injected(driver)})")
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if severe:
        fail(f"console errors: {severe}")
    panel = driver.find_element(By.ID, "workflow-detail")
    driver.execute_script("arguments[0].scrollIntoView()", panel)
    panel.screenshot(screenshot)

    # Cancel asks first: dismissed, nothing is sent.
    click_workflow_button(driver, "cancel", running_id)
    alert = WebDriverWait(driver, 10).until(expected_conditions.alert_is_present())
    if f"workflow {running_id}" not in alert.text:
        fail(f"the confirmation does not name the workflow: {alert.text}")
    alert.dismiss()
    seen = refreshes(driver)
    wait(driver, "two refreshes after the dismissed cancel", lambda d: refreshes(d) >= seen + 2)
    if "cancelled" in message(driver) or workflow_button(driver, "cancel", running_id) is None:
        fail(f"a dismissed cancel was sent: {message(driver)}")
    click_workflow_button(driver, "cancel", running_id)
    WebDriverWait(driver, 10).until(expected_conditions.alert_is_present()).accept()
    wait(driver, "the cancel's confirmation", lambda d: f"workflow {running_id} is cancelled" in message(d))


def main():
    if sys.argv[1] == "workflow":
        url, workflow_id, steps, edges, running_id, screenshot = sys.argv[2:8]
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(profile)
            try:
                driver.get(url)
                wait(driver, "the page refreshed twice", lambda d: refreshes(d) >= 2)
                check_workflow(driver, workflow_id, json.loads(steps), json.loads(edges), running_id, screenshot)
            finally:
                driver.quit()
        return
    role, url, failed_id = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            driver.get(url)
            wait(driver, "the page refreshed twice", lambda d: refreshes(d) >= 2)
            queues = driver.find_element(By.ID, "queues").text
            if "mail" not in queues:
                fail(f"the queue 'mail' is not shown: {queues}")
            wait(driver, f"failed job {failed_id} listed with its retry button",
                 lambda d: job_button(d, "retry", failed_id))
            errors = driver.find_element(By.ID, "jobs").text
            if "<script>" not in errors:
                fail(f"the failed job's error is not shown as text: {errors}")
            click_job_button(driver, "show", failed_id)
            wait(driver, "the job's detail", lambda d: d.find_element(By.ID, "job-detail").is_displayed())
            payload = driver.find_element(By.ID, "job-payload").text
            if "<script>" not in payload or "onerror" not in payload:
                fail(f"the payload is not shown as text: {payload}")
            attempts = driver.find_element(By.ID, "job-errors").text
            if "<script>window.pgjqInjected = 3</script> smtp timeout" not in attempts or " w " not in f" {attempts} ":
                fail(f"the failed attempt's error and worker are not shown as text: {attempts}")
            time.sleep(0.5)  # let an injected handler (an <img> that fails to load) run, were it markup
            if injected(driver) is not None:
                fail(f"a payload's script ran (window.pgjqInjected = {injected(driver)})")
            if role == "admin":
                severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
                if severe:
                    fail(f"console errors: {severe}")
                driver.save_screenshot(sys.argv[4])
            click_job_button(driver, "retry", failed_id)
            if role == "admin":
                wait(driver, "the retry's confirmation", lambda d: "is pending again" in message(d))
            else:
                wait(driver, "the retry's refusal", lambda d: "permission denied" in message(d))
            if injected(driver) is not None:
                fail("a payload's script ran after the refresh")
        finally:
            driver.quit()


main()
