// Module Licensing.
