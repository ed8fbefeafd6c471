"""The WSDL 1.1 description of the IDAP operations, for SOAP clients such as zeep.

Seed 004 defines the documents (its SOAP and IDAP schemas) but prints no WSDL; this
one adds nothing to them: document/literal operations whose input is the IDAP request
element and whose output is the matching response element, over SOAP 1.1 HTTP,
``SOAPAction`` ``http://ns.oracle.com/AQ/schemas/access#<method>`` (the form of the
seed's ``SOAPMethodName`` header).  The types import the shipped schemas, served
beside the servlet (``/aqserv/servlet/aq_access.xsd`` and ``soap_env.xsd``).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from .schema import AQ_NS

OPERATIONS = ("AQXmlSend", "AQXmlPublish", "AQXmlReceive", "AQXmlRegister", "AQXmlCommit",
              "AQXmlRollback")
WSDL_NS = "http://ns.oracle.com/AQ/schemas/access/wsdl"


def wsdl(location: str, service: str = "AQXmlServlet") -> str:
    """The WSDL document for a servlet at ``location`` (its absolute URL)."""
    messages, port_ops, binding_ops = [], [], []
    for op in OPERATIONS:
        messages.append(
            f'  <message name="{op}Input"><part name="body" element="aq:{op}"/></message>\n'
            f'  <message name="{op}Output"><part name="body" element="aq:{op}Response"/></message>')
        port_ops.append(
            f'    <operation name="{op}">\n'
            f'      <input message="tns:{op}Input"/>\n'
            f'      <output message="tns:{op}Output"/>\n'
            f'    </operation>')
        binding_ops.append(
            f'    <operation name="{op}">\n'
            f'      <soap:operation soapAction="{AQ_NS}#{op}" style="document"/>\n'
            f'      <input><soap:body use="literal"/></input>\n'
            f'      <output><soap:body use="literal"/></output>\n'
            f'    </operation>')
    nl = "\n"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"
             xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
             xmlns:xsd="http://www.w3.org/2001/XMLSchema"
             xmlns:aq="{AQ_NS}"
             xmlns:tns="{WSDL_NS}"
             targetNamespace="{WSDL_NS}" name="IDAP">
  <types>
    <xsd:schema targetNamespace="{WSDL_NS}">
      <xsd:import namespace="{AQ_NS}" schemaLocation="aq_access.xsd"/>
    </xsd:schema>
  </types>
{nl.join(messages)}
  <portType name="IDAPPortType">
{nl.join(port_ops)}
  </portType>
  <binding name="IDAPBinding" type="tns:IDAPPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
{nl.join(binding_ops)}
  </binding>
  <service name={quoteattr(service)}>
    <port name="IDAPPort" binding="tns:IDAPBinding">
      <soap:address location={quoteattr(location)}/>
    </port>
  </service>
</definitions>
"""
