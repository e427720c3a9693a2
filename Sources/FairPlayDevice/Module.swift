// Module FairPlayDevice.
