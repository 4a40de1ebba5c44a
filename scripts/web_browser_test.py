#!/usr/bin/python3
"""Drives `pgjq web` in Debian's headless Chromium (through chromedriver and python3-selenium).

web_browser_test.py admin URL FAILED_ID SCREENSHOT
    The page loads without console errors, shows the queue and the failed job, shows the job's payload as
    text without running the <script> and onerror handler it holds, and its retry button makes the job
    pending (the caller checks the database). Saves a screenshot.
web_browser_test.py observer URL FAILED_ID
    The page shows the job too, but its retry button is refused with the database's permission error.
Exits 1 with the reason on the first check that fails.
"""
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
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


def job_button(driver, action, job_id):
    found = driver.find_elements(By.CSS_SELECTOR, f'#jobs button[data-action="{action}"][data-job="{job_id}"]')
    return found[0] if found else None


def click_job_button(driver, action, job_id):
    """Finds and clicks the button in one step, so that a refresh between the two only means another try."""
    def clicked(d):
        button = job_button(d, action, job_id)
        if button is None:
            return False
        button.click()
        return True
    wait(driver, f"a click on the {action} button of job {job_id}", clicked)


def message(driver):
    box = driver.find_element(By.ID, "message")
    return box.text if box.is_displayed() else ""


def injected(driver):
    return driver.execute_script("return window.pgjqInjected === undefined ? null : window.pgjqInjected")


def main():
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
