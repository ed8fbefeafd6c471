"""Oracle object types (``CREATE TYPE … AS OBJECT / VARRAY / TABLE``) and their values,
as python-oracledb exposes them (``DbObjectType``, ``DbObjectAttr``, ``DbObject``).

This is the package's one public face: code outside ``sluice.objtypes`` imports from
here, never from the modules below, which build on each other in this order::

    datatypes   DB_TYPE_* constants, parse_datatype() -> AttrType, attribute lists
    checks      the per-datatype checks of an assigned value (ORA-12899, ORA-01438 …)
    dbobject    DbObjectAttr, DbObjectType, DbObject; build_object_type / _collection_type
    values      construct() (Oracle's default constructor), from_dict()
    builtin     the SYS types Oracle ships for AQ agents and JMS messages, JMS helpers
    records     a package's PL/SQL record types (RecordType), tied to the package's dataclass
    registry    SimpleTypeRegistry (the SYS types preloaded), resolve_type() (conn.gettype)
    storage     to_storage / from_storage (exact JSON round trip), type_spec / type_from_spec
"""

from __future__ import annotations

from .builtin import (JAVA_BOOLEAN, JAVA_BYTE, JAVA_DOUBLE, JAVA_FLOAT, JAVA_INT, JAVA_LONG,
                      JAVA_SHORT, JAVA_STRING, JMS_BYTES_MESSAGE, JMS_MAP_MESSAGE, JMS_OBJECT_MESSAGE,
                      JMS_PROPERTY_NUMBER, JMS_PROPERTY_STRING, JMS_STREAM_MESSAGE, JMS_TEXT_MESSAGE,
                      agent_from_object, agent_to_object, builtin_types, jms_bytes_message,
                      jms_bytes_of, jms_header, jms_map_message, jms_map_of, jms_message,
                      jms_properties_of, jms_text_message, jms_text_of)
from .datatypes import (DB_TYPE_BINARY_DOUBLE, DB_TYPE_BINARY_FLOAT, DB_TYPE_BLOB,
                        DB_TYPE_BOOLEAN, DB_TYPE_CHAR, DB_TYPE_CLOB, DB_TYPE_CURSOR, DB_TYPE_DATE, DB_TYPE_INTERVAL_DS,
                        DB_TYPE_LONG, DB_TYPE_LONG_NVARCHAR, DB_TYPE_LONG_RAW, DB_TYPE_NCHAR, DB_TYPE_NCLOB, DB_TYPE_NUMBER, DB_TYPE_NVARCHAR, DB_TYPE_OBJECT,
                        DB_TYPE_RAW, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_LTZ,
                        DB_TYPE_TIMESTAMP_TZ, DB_TYPE_VARCHAR, AttrType, DbType,
                        parse_attribute_list, parse_datatype)
from .datatypes import DB_TYPE_JSON
from .checks import LobValue, contents
from .dbobject import (DbObject, DbObjectAttr, DbObjectType, TypeRegistry, build_collection_type,
                       build_object_type, set_attribute_lob)
from .records import RecordType, build_record_type
from .registry import SimpleTypeRegistry, resolve_type
from .storage import from_json, from_storage, to_json, to_storage, type_from_spec, type_spec
from .values import construct, from_dict

__all__ = [
    "AttrType", "DbObject", "DbObjectAttr", "DbObjectType", "DbType", "LobValue", "RecordType",
    "SimpleTypeRegistry", "TypeRegistry", "agent_from_object", "agent_to_object",
    "build_collection_type", "build_object_type", "build_record_type", "builtin_types", "construct", "contents",
    "from_dict", "from_json", "from_storage",
    "jms_bytes_message", "jms_bytes_of", "jms_header", "jms_map_message", "jms_map_of",
    "jms_message", "jms_properties_of", "jms_text_message", "jms_text_of", "parse_attribute_list",
    "parse_datatype", "resolve_type", "set_attribute_lob", "to_json", "to_storage", "type_from_spec", "type_spec",
    "DB_TYPE_BINARY_DOUBLE", "DB_TYPE_BINARY_FLOAT", "DB_TYPE_BLOB", "DB_TYPE_BOOLEAN",
    "DB_TYPE_CHAR", "DB_TYPE_CLOB", "DB_TYPE_CURSOR", "DB_TYPE_DATE", "DB_TYPE_INTERVAL_DS", "DB_TYPE_LONG", "DB_TYPE_LONG_NVARCHAR",
    "DB_TYPE_LONG_RAW", "DB_TYPE_NCHAR", "DB_TYPE_NCLOB", "DB_TYPE_NUMBER", "DB_TYPE_NVARCHAR", "DB_TYPE_OBJECT", "DB_TYPE_RAW", "DB_TYPE_TIMESTAMP",
    "DB_TYPE_TIMESTAMP_LTZ", "DB_TYPE_TIMESTAMP_TZ", "DB_TYPE_VARCHAR",
    "DB_TYPE_JSON",
    "JAVA_BOOLEAN", "JAVA_BYTE", "JAVA_DOUBLE", "JAVA_FLOAT", "JAVA_INT", "JAVA_LONG",
    "JAVA_SHORT", "JAVA_STRING", "JMS_BYTES_MESSAGE", "JMS_MAP_MESSAGE", "JMS_OBJECT_MESSAGE",
    "JMS_PROPERTY_NUMBER", "JMS_PROPERTY_STRING", "JMS_STREAM_MESSAGE", "JMS_TEXT_MESSAGE",
]
