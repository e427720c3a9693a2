// Module FairPlay.
