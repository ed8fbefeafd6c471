"""Issue 7, acceptance 4 (second half): malformed, oversized and hostile documents are
always answered with a well-formed SOAP Fault (HTTP 500) or a 4xx — never an
unhandled error, an empty 500 or a dropped connection — and never change a queue.

Every generated document is broken on purpose (truncated, schema-violating, carrying
a DTD, too large, or not XML), so none of them may enqueue anything; after each one
the same HTTP session commits, so an enqueue that slipped through would show.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from .conftest import SOAP, commit_doc, count, example, send_raw

LIMIT = 64 * 1024
VALID = [send_raw("AQUSER.RAW_MSGQ"), example(1), example(3), example(5), example(7), example(14)]

XXE = [
    '<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE e [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]>',
    '<!DOCTYPE e [<!ENTITY % p SYSTEM "file:///etc/hostname"> %p;]>',
    '<!DOCTYPE e SYSTEM "file:///etc/passwd">',
    '<!DOCTYPE e [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY x "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
]


def _hostile(prolog: str, where: int) -> str:
    doc = send_raw("AQUSER.RAW_MSGQ", correlation="&x;" if where == 0 else "c")
    if where == 1:
        doc = doc.replace("<raw>414243</raw>", "<raw>&x;</raw>")
    return prolog + doc


def _schema_breakers() -> st.SearchStrategy[str]:
    base = send_raw("AQUSER.RAW_MSGQ")
    name = st.from_regex(r"x_[a-z]{1,8}", fullmatch=True)
    word = st.text(alphabet="abcXYZ-_ 9", min_size=1, max_size=12).filter(lambda w: not w.strip().isdigit())
    return st.one_of(
        name.map(lambda n: base.replace("</destination>", f"</destination><{n}/>")),
        word.map(lambda w: base.replace("<message_count>1</message_count>",
                                        f"<message_count>{w}</message_count>")),
        word.filter(lambda w: w.strip() not in ("ON_COMMIT", "IMMEDIATE")).map(
            lambda w: base.replace("</destination>", f"</destination><visibility>{w}</visibility>")),
        st.just(base.replace("<message_header>", "<message_header><priority>1</priority>", 1)
                .replace("<sender_id>", "<correlation>late</correlation><sender_id>")),
        st.just(base.replace(f'xmlns="{SOAP}"', 'xmlns="urn:not-soap"')),
        st.just(base.replace("AQXmlSend", "AQXmlDelete")),
        st.just(base.replace("<message_count>1</message_count>", "<message_count>2</message_count>")),
        st.just(base.replace("<Body>", '<Header><t xmlns="urn:t" xmlns:s="' + SOAP +
                             '" s:mustUnderstand="1"/></Header><Body>')),
    )


def _truncated() -> st.SearchStrategy[str]:
    def cut(doc: str, at: int, junk: str) -> str:
        end = doc.rindex("</Envelope>")
        at = at % max(end, 1)
        return doc[:at] + junk + doc[at:end]     # the root is never closed
    return st.builds(cut, st.sampled_from(VALID), st.integers(0, 10**6),
                     st.text(max_size=20))


documents = st.one_of(
    _truncated(),
    _schema_breakers(),
    st.builds(_hostile, st.sampled_from(XXE), st.integers(0, 1)),
    st.binary(max_size=200).map(lambda b: b"\x00" + b),                  # never XML
    st.integers(LIMIT + 1, LIMIT + 5000).map(
        lambda n: send_raw("AQUSER.RAW_MSGQ", "AB" * (n // 2))),       # over the size limit
    st.integers(300, 3000).map(lambda depth: send_raw("AQUSER.RAW_MSGQ").replace(
        "<raw>414243</raw>", "<raw>" + "<a>" * depth + "</a>" * depth + "</raw>")),
)


def _check(r: httpx.Response) -> None:
    if 400 <= r.status_code < 500:
        return
    assert r.status_code == 500, (r.status_code, r.text[:500])
    root = etree.fromstring(r.content)             # well-formed
    fault = root.find(f"{{{SOAP}}}Body/{{{SOAP}}}Fault")
    assert fault is not None, r.text[:500]
    assert fault.findtext("faultcode").startswith("SOAP-ENV:")
    assert fault.findtext("faultstring")
    assert fault.find("detail") is not None


@pytest.fixture
def fuzz_servlet(store):
    from .conftest import start_servlet
    s = start_servlet(store, max_request_bytes=LIMIT)
    yield s
    for c in s.clients:
        c.close()
    s.server.stop()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents, form=st.booleans())
def test_hostile_documents_get_a_fault_or_4xx_and_change_nothing(fuzz_servlet, store, doc, form):
    client = fuzz_servlet.clients[0] if fuzz_servlet.clients else fuzz_servlet.client()
    data = doc.encode("utf-8", "surrogatepass") if isinstance(doc, str) else doc
    if form:
        r = client.post("/aqserv/servlet/AQTestServlet", data={"aqxmldoc": data.decode("utf-8", "replace")})
    else:
        r = fuzz_servlet.post(data, client)
    _check(r)
    assert fuzz_servlet.post(commit_doc(), client).status_code == 200
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_xxe_is_never_resolved(fuzz_servlet):
    for prolog in XXE:
        r = fuzz_servlet.post(_hostile(prolog, 1))
        _check(r)
        assert r.status_code == 500 and "root:" not in r.text
        assert "ORA-31011" in r.text and "DOCTYPE" in r.text


def test_the_size_limit_is_413_also_without_content_length(fuzz_servlet):
    big = send_raw("AQUSER.RAW_MSGQ", "AB" * LIMIT).encode()
    client = fuzz_servlet.client()

    def chunks():
        for i in range(0, len(big), 4096):
            yield big[i:i + 4096]

    r = client.post("/aqserv/servlet/AQTestServlet", content=chunks(), headers={"Content-Type": "text/xml"})
    assert r.status_code == 413
    assert fuzz_servlet.post(big, client).status_code == 413
