#ifndef KSM_TEST_BUNDLE_H
#define KSM_TEST_BUNDLE_H

// True in a test bundle (the executable's name ends in .xctest): the constructors here act only
// there, since `ksm` links the same libraries.
int ksm_is_test_bundle(void);

#endif
