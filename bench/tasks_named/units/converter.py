import importlib

#: unit -> "module:function" converting a value in that unit to metres
TO_METRES = {
    "m": "units.metric:identity",
    "km": "units.metric:from_km",
    "ft": "units.imperial:from_feet",
    "in": "units.imperial:from_inches",
}


def convert(value, unit):
    module, func = TO_METRES[unit].split(":")
    return round(getattr(importlib.import_module(module), func)(value), 4)
