"""Normal-form conversions: A-normal form, graph normal form, basic-block normal form,
continuation-passing style and back (`un_cps.py`)."""
