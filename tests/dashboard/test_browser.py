"""The dashboard in a real browser (issue 17 §2): Debian's headless Chromium driven by
Selenium (``/usr/bin/chromium``, ``/usr/bin/chromedriver``: nothing downloaded), against
``sluice serve``'s application on 127.0.0.1 over a running two-site setup — site DBS1
propagates an ANYDATA queue to DBS2 (a database link) and to a local queue an apply
process reads; the processes run in a real :class:`~sluice.streams.host.Host`.

One browser for the module; each test leaves a screenshot in ``test-artifacts/``."""

from __future__ import annotations

import base64
import pathlib
import sqlite3
import time

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import sluice
from sluice.streams import RowLCR
from sluice.streams.host import Host

from .kit import USERS, make_users, serve


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts"
EVIL = "<script>"
LATE = "<img src=x>"           # a payload value with markup, shown in the error queue's excerpt


def lcr(cmd, old=None, new=None):
    return RowLCR.construct("DBS1", cmd, "TGT", "EMP", None, None, None, old, new)


class World:
    """Two sites, the processes running, the dashboard served for DBS1."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.a_dsn, b_dsn = f"sqlite:///{tmp / 'dbs1.db'}", f"sqlite:///{tmp / 'dbs2.db'}"
        self.target = tmp / "target.db"
        a, b = sluice.connect(self.a_dsn), sluice.connect(b_dsn)
        a.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO dbs1")
        b.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO dbs2")
        make_users(a)
        a.streams_adm.set_up_queue(queue_table="SRC_QT", queue_name="SRC")
        a.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
        b.aqadm.create_queue_table(queue_table="DST_QT", queue_payload_type="SYS.ANYDATA")
        b.aqadm.create_queue(queue_name="DST", queue_table="DST_QT")
        b.aqadm.start_queue(queue_name="DST")
        a.aqadm.create_queue_table(queue_table="EVIL_QT", queue_payload_type="RAW")
        a.aqadm.create_queue(queue_name=f'"{EVIL}"', queue_table="EVIL_QT")     # a name with markup
        a.aqadm.start_queue(queue_name=f'"{EVIL}"')
        a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{b_dsn}'")
        a.propagation_adm.create_propagation("to_dbs2", "src", "dst", "dbs2")
        a.propagation_adm.create_propagation("to_apply", "src", "apply_q")
        with sqlite3.connect(self.target) as t:
            t.execute('CREATE TABLE "TGT.EMP" (id integer PRIMARY KEY, name varchar(40))')
        a.apply_adm.create_apply(queue_name="apply_q", apply_name="apply1",
                                 apply_database_link=f"sqlite:///{self.target}")
        a.apply_adm.set_parameter("apply1", "disable_on_error", "N")
        a.apply_adm.start_apply("apply1")
        b.close()
        self.conn = a
        self.host = Host(lambda: sluice.connect(self.a_dsn))
        self.host.start()
        self.served = serve(self.a_dsn, interval=0.25, poll=0.25)

    def send(self, *payloads) -> None:
        q = self.conn.queue("SRC")
        for p in payloads:
            q.enqone(self.conn.msgproperties(payload=p))
            self.conn.commit()

    def errors(self) -> list[tuple]:
        return self.conn.query("SELECT LOCAL_TRANSACTION_ID, ERROR_NUMBER FROM DBA_APPLY_ERROR", None)[1]

    def close(self) -> None:
        self.served.stop()
        self.host.stop()
        self.conn.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = World(tmp_path_factory.mktemp("sites"))
    yield w
    w.close()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1300", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Network.enable", {})
    yield driver
    driver.quit()


def sign_in(driver, url: str, user: str) -> None:
    """Basic credentials on every request of the page (its polls and posts too)."""
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}})
    driver.get(url + "/dashboard")


def wait(driver, condition, timeout: float = 20.0):
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))


def screenshot(driver, name: str) -> pathlib.Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"dashboard-{name}.png"
    driver.save_screenshot(str(path))
    return path


# the page redraws the graph and cards on every poll: read them in one script call
NODES = """return Array.from(document.querySelectorAll('#topology g.node'))
  .map(n => [n.getAttribute('data-id'), n.textContent]);"""
EDGES = """return Array.from(document.querySelectorAll('#topology g.edge'))
  .map(e => [e.getAttribute('data-from'), e.getAttribute('data-to'), e.getAttribute('data-health'),
             e.textContent]);"""
CARDS = "return Array.from(document.querySelectorAll('#queues .card .name')).map(n => n.textContent);"


def nodes(driver) -> dict[str, str]:
    return dict(driver.execute_script(NODES))


def test_topology_of_two_sites(world, browser):
    sign_in(browser, world.served.url, "watcher")
    wait(browser, lambda d: "queue:SLUICE.DST@DBS2" in nodes(d))
    assert {"queue:SLUICE.SRC@DBS1", "propagation:TO_DBS2@DBS1", "queue:SLUICE.DST@DBS2", "propagation:TO_APPLY@DBS1",
            "queue:SLUICE.APPLY_Q@DBS1", "apply:APPLY1@DBS1"} <= set(nodes(browser))
    edges = {(a, b): health for a, b, health, _ in browser.execute_script(EDGES)}
    assert edges[("queue:SLUICE.SRC@DBS1", "propagation:TO_DBS2@DBS1")] == "ok"
    assert edges[("propagation:TO_DBS2@DBS1", "queue:SLUICE.DST@DBS2")] == "ok"
    assert edges[("queue:SLUICE.APPLY_Q@DBS1", "apply:APPLY1@DBS1")] == "ok"
    assert browser.find_element(By.ID, "site").text == "DBS1"
    # the queue named <script> is text on its card and in the graph, and no script ran
    assert f"SLUICE.{EVIL}" in browser.execute_script(CARDS)
    assert f"SLUICE.{EVIL}" in nodes(browser)[f"queue:SLUICE.{EVIL}@DBS1"]
    assert browser.execute_script("return document.scripts.length") == 1   # the dashboard's own
    screenshot(browser, "topology")


def test_chart_moves_when_messages_flow(world, browser):
    chart = browser.find_element(By.ID, "chart-throughput")
    wait(browser, lambda d: int(chart.get_attribute("data-points")) >= 2)
    before = float(chart.get_attribute("data-total"))
    world.send(*(lcr("INSERT", new={"ID": i, "NAME": f"n{i}"}) for i in range(5)))
    wait(browser, lambda d: float(chart.get_attribute("data-total")) > before)
    # the rate labels on the edges say so too, and the flow reached the other site
    wait(browser, lambda d: any(label.split("/s")[0] not in ("", "0")
                                for *_, label in d.execute_script(EDGES)))
    assert browser.find_elements(By.CSS_SELECTOR, '#chart-throughput polyline[data-series="prop"]')
    screenshot(browser, "flow")


def test_retry_refused_without_privilege_then_works(world, browser):
    world.send(lcr("UPDATE", old={"ID": 99}, new={"NAME": LATE}))        # no row 99: an apply error
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#errors tbody tr"))
    (row,) = browser.find_elements(By.CSS_SELECTOR, "#errors tbody tr")
    local_id = row.get_attribute("data-id")
    excerpt = row.find_element(By.CSS_SELECTOR, "code.excerpt")
    assert "ORA-26787" in row.text and "UPDATE" in excerpt.text
    assert LATE in excerpt.text and not excerpt.find_elements(By.TAG_NAME, "img")   # text, not markup
    # WATCHER may look, not act: DBMS_APPLY_ADM refuses, the entry stays
    row.find_element(By.CSS_SELECTOR, "button.retry").click()
    status = browser.find_element(By.ID, "action-status")
    wait(browser, lambda d: "ORA-01031" in status.text)
    assert world.errors() == [(local_id, 26787)]
    screenshot(browser, "refused")
    # the cause fixed, ADMIN retries: applied, gone from the error queue and from the page
    with sqlite3.connect(world.target) as t:
        t.execute("INSERT INTO \"TGT.EMP\" VALUES (99, 'early')")
    sign_in(browser, world.served.url, "admin")
    retry = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f'#errors tbody tr[data-id="{local_id}"] button.retry'))
    retry[0].click()
    wait(browser, lambda d: "Applied" in d.find_element(By.ID, "action-status").text)
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#errors tbody tr"))
    assert world.errors() == []
    with sqlite3.connect(world.target) as t:
        assert t.execute('SELECT name FROM "TGT.EMP" WHERE id = 99').fetchall() == [(LATE,)]
    screenshot(browser, "retried")
