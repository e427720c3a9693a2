// Module KSMService.
