"""IDAP: Oracle Streams AQ over SOAP 1.1 and HTTP — the AQ servlet of seed 004.

``sluice serve`` runs :func:`create_app` on uvicorn; agents POST IDAP documents
(AQXmlSend, AQXmlPublish, AQXmlReceive, AQXmlRegister, AQXmlCommit, AQXmlRollback)
to ``/aqserv/servlet/<ServletName>``.  Modules, in the order a request meets them:

- :mod:`.app` — the Starlette application, HTTP rules, ``serve``;
- :mod:`.agents` — authentication (the HTTP user is the AQ agent) and the choice of
  database user;
- :mod:`.schema` — hardened parsing, normalisation, validation (``xsd/``);
- :mod:`.parse` — documents to requests; :mod:`.payload` — payloads both ways;
- :mod:`.sessions` — HTTP sessions, their transactions, the connection pool;
- :mod:`.ops` — the operations; :mod:`.serialise` — responses and SOAP Faults;
- :mod:`.wsdl` — the WSDL for SOAP clients.
"""

from .app import IdapConfig, create_app, serve
from .schema import AQ_NS, OLD_ENVELOPE_NS, SOAP_NS

__all__ = ["IdapConfig", "create_app", "serve", "AQ_NS", "SOAP_NS", "OLD_ENVELOPE_NS"]
