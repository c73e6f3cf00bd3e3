/*
** shelfmark_malloc_keep: how much free memory the C allocator keeps at
** the top of its heaps before it gives it back (malloc.go). Returns 1
** where it was set (glibc), 0 where there is no such setting.
*/
#include <stdlib.h> /* defines __GLIBC__ where the C library is glibc */
#ifdef __GLIBC__
#include <malloc.h>
#endif

int shelfmark_malloc_keep(int bytes){
#ifdef __GLIBC__
  return mallopt(M_TRIM_THRESHOLD, bytes);
#else
  (void)bytes;
  return 0;
#endif
}

/* 1 where the C library is glibc */
int shelfmark_glibc(void){
#ifdef __GLIBC__
  return 1;
#else
  return 0;
#endif
}
