/* A file whose code all comes from another it includes (as glibc's dl-sbrk.c includes
 * sbrk.c): its DWARF 5 line table lists wrap.c as entry 0 and inner.c as entry 1, and its
 * rows use entry 1 without a DW_LNS_set_file, which binutils 2.40 names by entry 0. */
#include "inner.c"
