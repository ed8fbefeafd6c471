"""IDAP: Oracle Streams AQ over SOAP 1.1 and HTTP — the AQ servlet of seed 004.

``sluice serve`` runs :func:`create_app` on uvicorn; agents POST IDAP documents
(AQXmlSend, AQXmlPublish, AQXmlReceive, AQXmlRegister, AQXmlCommit, AQXmlRollback)
to ``/aqserv/servlet/<ServletName>``.  Modules, in the order a request meets them:

- :mod:`.app` — the Starlette application, HTTP rules, ``serve``;
  :mod:`.httpserver` — uvicorn's protocol writing each response in one piece;
- :mod:`.agents` — authentication (the HTTP user is the AQ agent) and the choice of
  database user;
- :mod:`.schema` — hardened parsing, normalisation, validation (``xsd/``);
- :mod:`.parse` — documents to requests; :mod:`.payload` — payloads both ways;
- :mod:`.sessions` — HTTP sessions, their transactions, the connection pool;
- :mod:`.ops` — the operations; :mod:`.serialise` — responses and SOAP Faults;
- :mod:`.wsdl` — the WSDL for SOAP clients; :mod:`.client` — a Python client
  (``sluice idap send|receive`` uses it).
"""

from importlib import import_module

from .schema import AQ_NS, OLD_ENVELOPE_NS, SOAP_NS

# the server (Starlette, uvicorn) and the client load when first used: ``sluice idap``
# and programs that only send should not pay for the other side
_LAZY = {"IdapConfig": ".app", "create_app": ".app", "serve": ".app",
         "Client": ".client", "ReceivedMessage": ".client"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Client", "ReceivedMessage", "IdapConfig", "create_app", "serve", "AQ_NS", "SOAP_NS", "OLD_ENVELOPE_NS"]
