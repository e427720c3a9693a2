#ifndef FAIRPLAYKSM_CHIREDIS_SHIM_H
#define FAIRPLAYKSM_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>

#endif
