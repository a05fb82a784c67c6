"""Level-13 capability catalog: types, validation, scopes, labels and JSON Schemas."""

from autoport.catalog.catalog import (
    CATALOG,
    Catalog,
    UnknownCapability,
    UnknownProperty,
)
from autoport.catalog.types import (
    Capability,
    DataType,
    DateTimeType,
    EnumType,
    IntegerType,
    NumberType,
    ObjectType,
    Property,
    QuantityType,
    StringType,
)
from autoport.catalog.validation import (
    DataPointError,
    validate_capabilities,
    validate_data,
    validate_property_value,
    validate_wrapper,
)

__all__ = [
    "CATALOG",
    "Capability",
    "Catalog",
    "DataPointError",
    "DataType",
    "DateTimeType",
    "EnumType",
    "IntegerType",
    "NumberType",
    "ObjectType",
    "Property",
    "QuantityType",
    "StringType",
    "UnknownCapability",
    "UnknownProperty",
    "validate_capabilities",
    "validate_data",
    "validate_property_value",
    "validate_wrapper",
]
