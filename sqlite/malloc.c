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

#include "sqlite3api.h"

int sqlite3_config(int, ...);
#define SQLITE_CONFIG_MEMSTATUS 9

/*
** shelfmark_memstatus_off: stop SQLite counting its allocations
** (malloc.go). SQLite's result code: SQLITE_MISUSE (21) once SQLite is
** initialized, when it can no longer be changed.
*/
int shelfmark_memstatus_off(void){
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

sqlite3_int64 sqlite3_memory_used(void);

/* shelfmark_memory_used: the bytes SQLite counts as allocated (0 while
** it counts nothing). */
sqlite3_int64 shelfmark_memory_used(void){
  return sqlite3_memory_used();
}
