/*
** The FTS5 tokenizer shelfmark (searchstem.go in the root package):
** FTS5's porter tokenizer over unicode61 with remove_diacritics 2 (case
** and diacritics folded, every word folded to its Porter stem), except
** for the last word of a prefix query, which stays as typed: a prefix is
** the beginning of a word, not a word, and stemming it changes it (voy
** becomes voi, and voy* would no longer find voyages). It is registered
** on every connection with shelfmark_rank (rank.c), and the search index
** names it (migration 0019_stemming.sql).
*/
#include "fts5.h"
#include <string.h>

typedef struct StemTokenizer {
  fts5_tokenizer porter;       /* FTS5's porter tokenizer's methods */
  Fts5Tokenizer *pPorter;      /* over unicode61 remove_diacritics 2 */
  fts5_tokenizer unicode;      /* FTS5's unicode61 tokenizer's methods */
  Fts5Tokenizer *pUnicode;     /* with remove_diacritics 2 */
} StemTokenizer;

static void stemDelete(Fts5Tokenizer *pTok){
  StemTokenizer *p = (StemTokenizer*)pTok;
  if( p==0 ) return;
  if( p->pPorter ) p->porter.xDelete(p->pPorter);
  if( p->pUnicode ) p->unicode.xDelete(p->pUnicode);
  sqlite3_free(p);
}

static int stemCreate(void *pCtx, const char **azArg, int nArg, Fts5Tokenizer **ppOut){
  fts5_api *api = (fts5_api*)pCtx;
  const char *aPorter[] = {"unicode61", "remove_diacritics", "2"};
  const char *aUnicode[] = {"remove_diacritics", "2"};
  void *pUser = 0;
  (void)azArg; (void)nArg;
  *ppOut = 0;
  StemTokenizer *p = (StemTokenizer*)sqlite3_malloc64(sizeof(StemTokenizer));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  int rc = api->xFindTokenizer(api, "porter", &pUser, &p->porter);
  if( rc==SQLITE_OK ) rc = p->porter.xCreate(pUser, aPorter, 3, &p->pPorter);
  if( rc==SQLITE_OK ) rc = api->xFindTokenizer(api, "unicode61", &pUser, &p->unicode);
  if( rc==SQLITE_OK ) rc = p->unicode.xCreate(pUser, aUnicode, 2, &p->pUnicode);
  if( rc!=SQLITE_OK ){ stemDelete((Fts5Tokenizer*)p); return rc; }
  *ppOut = (Fts5Tokenizer*)p;
  return SQLITE_OK;
}

/* the words of a prefix query, as unicode61 folds them */
typedef struct Word { int iStart, iEnd, nText; char *zText; } Word;
typedef struct Words { Word *a; int n, nAlloc, rc; } Words;

static int collectWord(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd){
  Words *w = (Words*)pCtx;
  (void)tflags;
  if( w->n==w->nAlloc ){
    int nNew = w->nAlloc ? w->nAlloc*2 : 16;
    Word *a = (Word*)sqlite3_realloc64(w->a, sizeof(Word)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    w->a = a; w->nAlloc = nNew;
  }
  char *z = (char*)sqlite3_malloc64(nToken>0 ? (sqlite3_uint64)nToken : 1);
  if( z==0 ) return SQLITE_NOMEM;
  memcpy(z, pToken, nToken);
  w->a[w->n].iStart = iStart; w->a[w->n].iEnd = iEnd;
  w->a[w->n].nText = nToken; w->a[w->n].zText = z;
  w->n++;
  return SQLITE_OK;
}

/* passes the stem of one word on, at the word's own offsets */
typedef struct StemOut {
  void *pCtx;
  int (*xToken)(void*, int, const char*, int, int, int);
  int iStart, iEnd;
} StemOut;

static int emitStem(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd){
  StemOut *o = (StemOut*)pCtx;
  (void)iStart; (void)iEnd;
  return o->xToken(o->pCtx, tflags, pToken, nToken, o->iStart, o->iEnd);
}

static int stemTokenize(Fts5Tokenizer *pTok, void *pCtx, int flags, const char *pText, int nText,
    int (*xToken)(void*, int, const char*, int, int, int)){
  StemTokenizer *p = (StemTokenizer*)pTok;
  if( (flags & FTS5_TOKENIZE_PREFIX)==0 ){
    return p->porter.xTokenize(p->pPorter, pCtx, flags, pText, nText, xToken);
  }
  Words w = {0, 0, 0, SQLITE_OK};
  int rc = p->unicode.xTokenize(p->pUnicode, (void*)&w, flags, pText, nText, collectWord);
  for(int i=0; rc==SQLITE_OK && i<w.n; i++){
    Word *x = &w.a[i];
    if( i==w.n-1 ){
      rc = xToken(pCtx, 0, x->zText, x->nText, x->iStart, x->iEnd);
    }else{
      /* a word before the prefix: its stem (porter reads the folded
      ** word as one word again) */
      StemOut o = {pCtx, xToken, x->iStart, x->iEnd};
      rc = p->porter.xTokenize(p->pPorter, (void*)&o, flags & ~FTS5_TOKENIZE_PREFIX, x->zText, x->nText, emitStem);
    }
  }
  for(int i=0; i<w.n; i++) sqlite3_free(w.a[i].zText);
  sqlite3_free(w.a);
  return rc;
}

/* adds the tokenizer to the connection's FTS5 (rank.c calls it) */
int shelfmarkRegisterStem(fts5_api *api){
  static fts5_tokenizer tok = {stemCreate, stemDelete, stemTokenize};
  return api->xCreateTokenizer(api, "shelfmark", (void*)api, &tok, 0);
}
