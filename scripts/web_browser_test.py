#!/usr/bin/python3
"""Drives `pgjq web` in Debian's headless Chromium (through chromedriver and python3-selenium).

web_browser_test.py admin URL FAILED_ID SCREENSHOT
    The page loads without console errors, shows the queue and the failed job; the job's link opens its
    detail in view, at its own address, and the back button closes it; the payload is shown as text without
    running the <script> and onerror handler it holds, and the retry button makes the job pending (the
    caller checks the database). Saves a screenshot at 1280x800.
web_browser_test.py observer URL FAILED_ID
    The page shows the job too, but no retry or pause button, and the queue's page its settings read-only;
    a retry sent anyway is refused with the database's permission error.
web_browser_test.py operate URL PSQL SCREENSHOT_DIR
    On queue "bulk" (set up by the caller: three failed jobs with payloads {"order": 1..3}, two jobs held by
    worker w-bulk): a search by payload finds the one job; a bulk retry of the queue's failed jobs asks with
    their count (dismissed: nothing sent; accepted: they are retried, the caller checks); on queue "bulk5k"
    (5 000 failed jobs) one confirmed action retries them all, with the count and the progress; the queue's page
    lists the worker and saves a changed rate limit; a table under the pointer keeps its rows while a new
    job arrives (made with PSQL) and shows it once the pointer leaves; the charts have a legend and a time
    axis; at a phone's width the page does not scroll sideways. Saves queue.png and phone.png there.
web_browser_test.py workflow URL WORKFLOW_ID STEPS EDGES RUNNING_ID SCREENSHOT
    The workflow's graph shows one box per step in the state STEPS gives ({"name": "state", ...}, read from
    the database by the caller) and one arrow per dependency of EDGES ([["from", "to"], ...]); its table
    lists the same states and its error as text, and nothing its steps hold runs. Saves a screenshot of the
    workflow. Then the cancel button of workflow RUNNING_ID asks first: dismissed, nothing is sent; accepted,
    the workflow is cancelled (the caller checks the database).
Exits 1 with the reason on the first check that fails.
"""
import json
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait


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
        By.CSS_SELECTOR, f'#{kind}s [data-action="{action}"][data-{kind}="{item_id}"]')
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


def in_view(driver, element_id):
    return driver.execute_script(
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return r.top >= -1 && r.top < window.innerHeight;", element_id)


def first_job_ids(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#jobs tbody tr')].map((r) => Number(r.dataset.job));")


def check_operate(driver, psql, artefacts):
    # A search by payload: the form's fields become the page's address.
    payload = driver.find_element(By.ID, "job-payload-filter")
    payload.clear()
    payload.send_keys('{"order": 2}')
    Select(driver.find_element(By.ID, "job-state")).select_by_value("")
    driver.find_element(By.CSS_SELECTOR, "#job-search button[type=submit]").click()
    wait(driver, "the search by payload in the address", lambda d: "payload=" in d.current_url)
    wait(driver, "one job found by its payload", lambda d: len(first_job_ids(d)) == 1)
    found = driver.execute_script("return document.querySelector('#jobs tbody tr').textContent")
    if "bulk" not in found:
        fail(f"the job found by payload is not queue bulk's: {found}")

    # Bulk retry of the queue's failed jobs: the question names the count.
    driver.get(driver.current_url.split("#")[0] + "#queue=bulk&state=failed")
    wait(driver, "the three failed jobs of bulk", lambda d: len(first_job_ids(d)) == 3)
    bulk = wait(driver, "the bulk retry button",
                lambda d: (d.find_elements(By.CSS_SELECTOR, '#job-bulk [data-action="bulk-retry"]') or [None])[0])
    bulk.click()
    alert = WebDriverWait(driver, 10).until(expected_conditions.alert_is_present())
    if alert.text != "Retry 3 failed jobs of queue bulk?":
        fail(f"the bulk retry asks {alert.text!r}")
    alert.dismiss()
    seen = refreshes(driver)
    wait(driver, "two refreshes after the dismissed bulk retry", lambda d: refreshes(d) >= seen + 2)
    if len(first_job_ids(driver)) != 3:
        fail("a dismissed bulk retry was sent")
    driver.find_element(By.CSS_SELECTOR, '#job-bulk [data-action="bulk-retry"]').click()
    WebDriverWait(driver, 10).until(expected_conditions.alert_is_present()).accept()
    wait(driver, "the bulk retry's progress", lambda d: "retried 3 of 3 jobs" in message(d))
    wait(driver, "no failed job of bulk left", lambda d: len(first_job_ids(d)) == 0)

    # The 5 000 failed jobs of a queue, retried by one confirmed action, with the count in the question and
    # the progress.
    driver.get(driver.current_url.split("#")[0] + "#queue=bulk5k&state=failed")
    wait(driver, "a page of bulk5k's failed jobs", lambda d: len(first_job_ids(d)) == 50)
    driver.find_element(By.CSS_SELECTOR, '#job-bulk [data-action="bulk-retry"]').click()
    alert = WebDriverWait(driver, 10).until(expected_conditions.alert_is_present())
    if alert.text != "Retry 5000 failed jobs of queue bulk5k?":
        fail(f"the bulk retry of 5000 asks {alert.text!r}")
    alert.accept()
    wait(driver, "the retry of 5000 jobs", lambda d: "retried 5000 of 5000 jobs" in message(d), seconds=120)
    left = subprocess.run(psql + ["-c", "SELECT count(*) FILTER (WHERE status = 'failed') || ' ' || count(*)"
                                  " FROM pgjq.jobs WHERE queue_name = 'bulk5k'"],
                          check=True, capture_output=True, text=True).stdout.strip()
    if left != "0 5000":
        fail(f"after the retry of 5000, bulk5k's failed and all jobs: {left}")

    # The queue's page: its workers, and a setting changed.
    driver.get(driver.current_url.split("#")[0] + "#open=queue:bulk")
    wait(driver, "the queue's page listing worker w-bulk",
         lambda d: d.find_elements(By.CSS_SELECTOR, '#queue-workers tr[data-worker="w-bulk"]'))
    row = driver.find_element(By.CSS_SELECTOR, '#queue-workers tr[data-worker="w-bulk"]').text
    if " 2 " not in f" {row} ":
        fail(f"worker w-bulk does not hold 2 jobs: {row}")
    if not in_view(driver, "queue-detail"):
        fail("the queue's page is not in view")
    rate = driver.find_element(By.CSS_SELECTOR, '#queue-settings [data-setting="rate_limit"]')
    rate.clear()
    rate.send_keys("50")
    driver.find_element(By.ID, "queue-save").click()
    wait(driver, "the settings saved", lambda d: "queue bulk: settings changed" in message(d))
    wait(driver, "the new rate limit shown",
         lambda d: d.find_element(By.CSS_SELECTOR, '#queue-settings [data-setting="rate_limit"]').get_attribute("value") == "50")
    driver.find_element(By.ID, "queue-detail").screenshot(f"{artefacts}/queue.png")

    # A table under the pointer keeps its rows while a job arrives; it shows the job once the pointer leaves.
    driver.get(driver.current_url.split("#")[0] + "#queue=bulk")
    wait(driver, "bulk's jobs", lambda d: len(first_job_ids(d)) >= 3)
    before = first_job_ids(driver)
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, "#jobs tbody tr")).perform()
    subprocess.run(psql + ["-c", "SELECT pgjq.enqueue('late', '{}', 'bulk')"], check=True, stdout=subprocess.DEVNULL)
    seen = refreshes(driver)
    wait(driver, "three refreshes with the pointer over the jobs", lambda d: refreshes(d) >= seen + 3)
    if first_job_ids(driver) != before:
        fail("the jobs under the pointer moved")
    if driver.find_element(By.ID, "jobs").get_attribute("data-held") != "true":
        fail("the held table is not marked as held")
    ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "header")).perform()
    wait(driver, "the new job once the pointer left", lambda d: first_job_ids(d)[:1] != before[:1])

    # The charts: a legend entry per series, and a time axis.
    wait(driver, "the charts' time axis",
         lambda d: len(d.find_elements(By.CSS_SELECTOR, "#charts svg text[text-anchor=end]")) == 4)
    if len(driver.find_elements(By.CSS_SELECTOR, "#charts .legend .swatch")) < 7:
        fail("the charts' legends lack their colours")

    # At a phone's width nothing scrolls the page sideways, and the search is there.
    driver.set_window_size(390, 844)
    seen = refreshes(driver)
    wait(driver, "a refresh at a phone's width", lambda d: refreshes(d) >= seen + 1)
    wide = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    if wide > 1:
        fail(f"at 390 px the page is {wide} px too wide")
    if not driver.find_element(By.ID, "job-search").is_displayed():
        fail("no search at a phone's width")
    driver.save_screenshot(f"{artefacts}/phone.png")
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if severe:
        fail(f"console errors: {severe}")


def main():
    if sys.argv[1] == "operate":
        url, psql, artefacts = sys.argv[2], sys.argv[3].split(), sys.argv[4]
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(profile)
            try:
                driver.set_window_size(1280, 800)
                driver.get(url)
                wait(driver, "the page refreshed twice", lambda d: refreshes(d) >= 2)
                check_operate(driver, psql, artefacts)
            finally:
                driver.quit()
        return
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
            if role == "admin":
                wait(driver, f"failed job {failed_id} listed with its retry button",
                     lambda d: job_button(d, "retry", failed_id))
            else:
                wait(driver, f"failed job {failed_id} listed", lambda d: job_button(d, "show", failed_id))
                seen = refreshes(driver)
                wait(driver, "two more refreshes", lambda d: refreshes(d) >= seen + 2)
                if job_button(driver, "retry", failed_id) or driver.find_elements(By.CSS_SELECTOR, '#queues [data-action="pause"]'):
                    fail("an observer is offered retry or pause")
            errors = driver.find_element(By.ID, "jobs").text
            if "<script>" not in errors:
                fail(f"the failed job's error is not shown as text: {errors}")
            click_job_button(driver, "show", failed_id)
            wait(driver, "the job's detail", lambda d: d.find_element(By.ID, "job-detail").is_displayed())
            if f"open=job%3A{failed_id}" not in driver.current_url and f"open=job:{failed_id}" not in driver.current_url:
                fail(f"the job's detail has no address of its own: {driver.current_url}")
            wait(driver, "the job's detail in view", lambda d: in_view(d, "job-detail"))
            payload = driver.find_element(By.ID, "job-payload").text
            if "<script>" not in payload or "onerror" not in payload:
                fail(f"the payload is not shown as text: {payload}")
            # read in one script: each refresh redraws the fields
            trace = driver.execute_script(
                "const t = document.getElementById('job-trace');"
                "return t && [t.tagName.toLowerCase(), t.textContent, t.href || null];")
            if not trace or trace[1] != "4bf92f3577b34da6a3ce929d0e0e4736":
                fail(f"the job's trace id is not shown: {trace}")
            link = trace[2] if trace[0] == "a" else None
            wanted = 'https://traces.example/trace/4bf92f3577b34da6a3ce929d0e0e4736?from=%22pgjq%22&view=%3C1%3E'
            if role == "admin" and link != wanted:
                fail(f"the trace id does not link to the tracing UI --trace-url names: {link}")
            if role != "admin" and link is not None:
                fail(f"a trace link without --trace-url: {link}")
            fields = driver.execute_script(
                "return [...document.querySelectorAll('#job-fields dt, #job-fields dd')].map((e) => e.textContent);")
            if "header x-note" not in fields or "<b>raw</b>" not in fields:
                fail(f"the job's headers are not shown as text: {fields}")
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
            if role == "admin":
                driver.set_window_size(1280, 800)
                wait(driver, "the job's detail in view at 1280x800", lambda d: in_view(d, "job-detail"))
                driver.save_screenshot(sys.argv[4])
                click_job_button(driver, "retry", failed_id)
                wait(driver, "the retry's confirmation", lambda d: "is pending again" in message(d))
                driver.back()
                wait(driver, "the back button closing the job", lambda d: not d.find_element(By.ID, "job-detail").is_displayed())
            else:
                refused = driver.execute_async_script(
                    "const done = arguments[arguments.length - 1];"
                    "fetch(`/api/jobs/${arguments[0]}/retry`, {method: 'POST', headers: {'X-PGJQ-CSRF': "
                    "document.querySelector('meta[name=pgjq-csrf]').content}}).then((r) => r.json().then((b) => done([r.status, b.error])));",
                    failed_id)
                if refused[0] != 403 or "permission denied" not in refused[1]:
                    fail(f"an observer's retry was not refused: {refused}")
                driver.get(url.split("?")[0].split("#")[0] + "#open=queue:mail")
                wait(driver, "the queue's page", lambda d: d.find_element(By.ID, "queue-detail").is_displayed())
                wait(driver, "its settings shown read-only",
                     lambda d: d.find_elements(By.CSS_SELECTOR, '#queue-settings [data-setting="rate_limit"][disabled]'))
                if driver.find_element(By.ID, "queue-save").is_displayed():
                    fail("an observer is offered to save a queue's settings")
            if injected(driver) is not None:
                fail("a payload's script ran after the refresh")
        finally:
            driver.quit()


main()
