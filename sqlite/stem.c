/*
** The FTS5 tokenizer shelfmark (searchstem.go in the root package), a
** tokenizer of FTS5's version 2 API, which is given the locale of the
** text it reads (the search index has locale=1, and its triggers give
** each document's text as fts5_locale(lang, text): migration
** 0027_stem_languages.sql).
**
** A document (FTS5_TOKENIZE_DOCUMENT, and FTS5_TOKENIZE_AUX for
** snippets) without a locale, or with one not in aLang, is read as
** before languages were known: FTS5's porter tokenizer over unicode61
** with remove_diacritics 2 (case and diacritics folded, every word
** folded to its English Porter stem). A document whose locale is one of
** aLang (the Snowball name of its language: french, german …) is read by
** unicode61 with remove_diacritics 2, and each folded word of 3 to 64
** bytes is folded to its stem by that language's Snowball stemmer
** (libstemmer_c, from the Go module github.com/tebeka/snowball, whose C
** objects the package links: fts5.go).
**
** A query (FTS5_TOKENIZE_QUERY) has no language: each word is given as
** its Porter stem and, at the same position (FTS5_TOKEN_COLOCATED, FTS5's
** synonyms, which also hold inside a phrase), its stem in every language
** of aLang, each distinct stem once. The last word of a prefix query
** stays as typed (folded): a prefix is the beginning of a word, not a
** word, and stemming it changes it (voy becomes voi, and voy* would no
** longer find voyages).
**
** It is registered on every connection with shelfmark_rank (rank.c).
*/
#include "fts5.h"
#include <string.h>

/* libstemmer_c's API (libstemmer.h of github.com/tebeka/snowball) */
struct sb_stemmer;
struct sb_stemmer *sb_stemmer_new(const char *algorithm, const char *charenc);
void sb_stemmer_delete(struct sb_stemmer *stemmer);
const unsigned char *sb_stemmer_stem(struct sb_stemmer *stemmer, const unsigned char *word, int size);
int sb_stemmer_length(struct sb_stemmer *stemmer);

/* the languages stemmed besides English, by their Snowball names: the
** root package's SearchLanguages, in its order (a test compares them) */
static const char *aLang[] = {"french", "german", "spanish", "italian", "dutch", "portuguese", "swedish"};
#define N_LANG ((int)(sizeof(aLang)/sizeof(aLang[0])))

/* the bounds of a word stemmed, in bytes, as FTS5's porter tokenizer's */
#define STEM_MIN 3
#define STEM_MAX 64

typedef struct StemTokenizer {
  fts5_tokenizer porter;       /* FTS5's porter tokenizer's methods */
  Fts5Tokenizer *pPorter;      /* over unicode61 remove_diacritics 2 */
  fts5_tokenizer unicode;      /* FTS5's unicode61 tokenizer's methods */
  Fts5Tokenizer *pUnicode;     /* with remove_diacritics 2 */
  struct sb_stemmer *aStem[N_LANG]; /* made when first needed */
} StemTokenizer;

static void stemDelete(Fts5Tokenizer *pTok){
  StemTokenizer *p = (StemTokenizer*)pTok;
  if( p==0 ) return;
  if( p->pPorter ) p->porter.xDelete(p->pPorter);
  if( p->pUnicode ) p->unicode.xDelete(p->pUnicode);
  for(int i=0; i<N_LANG; i++) sb_stemmer_delete(p->aStem[i]);
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

/* the index in aLang of a locale, or -1 */
static int langOf(const char *pLocale, int nLocale){
  for(int i=0; pLocale && i<N_LANG; i++){
    if( (int)strlen(aLang[i])==nLocale && memcmp(aLang[i], pLocale, nLocale)==0 ) return i;
  }
  return -1;
}

/* the stemmer of aLang[i], made when first needed (0: out of memory) */
static struct sb_stemmer *stemmerOf(StemTokenizer *p, int i){
  if( p->aStem[i]==0 ) p->aStem[i] = sb_stemmer_new(aLang[i], "UTF_8");
  return p->aStem[i];
}

/* the Snowball stem of a folded word in aLang[i]: the word itself when
** it is shorter or longer than the bounds */
static int snowballStem(StemTokenizer *p, int i, const char *z, int n, const char **pz, int *pn){
  *pz = z; *pn = n;
  if( n<STEM_MIN || n>STEM_MAX ) return SQLITE_OK;
  struct sb_stemmer *s = stemmerOf(p, i);
  if( s==0 ) return SQLITE_NOMEM;
  const unsigned char *st = sb_stemmer_stem(s, (const unsigned char*)z, n);
  if( st==0 ) return SQLITE_NOMEM;
  *pz = (const char*)st; *pn = sb_stemmer_length(s);
  return SQLITE_OK;
}

/* a document in a language of aLang: unicode61's words, stemmed */
typedef struct LangOut {
  StemTokenizer *p;
  int iLang;
  void *pCtx;
  int (*xToken)(void*, int, const char*, int, int, int);
} LangOut;

static int emitLang(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd){
  LangOut *o = (LangOut*)pCtx;
  const char *z; int n;
  int rc = snowballStem(o->p, o->iLang, pToken, nToken, &z, &n);
  if( rc!=SQLITE_OK ) return rc;
  return o->xToken(o->pCtx, tflags, z, n, iStart, iEnd);
}

/* the words of a query, as unicode61 folds them */
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

/* the distinct stems of one query word, first the Porter one */
#define MAX_STEMS (N_LANG+1)
typedef struct Stems {
  int n;
  int an[MAX_STEMS];
  char az[MAX_STEMS][STEM_MAX+8];
} Stems;

static int addStem(Stems *s, const char *z, int n){
  /* a stem is at most a byte or two longer than its word (porter's
  ** -bl to -ble), and the words stemmed are at most STEM_MAX bytes */
  if( n>STEM_MAX+7 ) return SQLITE_ERROR;
  for(int i=0; i<s->n; i++){
    if( s->an[i]==n && memcmp(s->az[i], z, n)==0 ) return SQLITE_OK;
  }
  if( s->n<MAX_STEMS ){
    memcpy(s->az[s->n], z, n);
    s->an[s->n++] = n;
  }
  return SQLITE_OK;
}

/* receives the Porter stem of one word (porter reads the folded word as
** one word again) */
static int collectPorter(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd){
  (void)tflags; (void)iStart; (void)iEnd;
  return addStem((Stems*)pCtx, pToken, nToken);
}

static int stemTokenize(Fts5Tokenizer *pTok, void *pCtx, int flags, const char *pText, int nText,
    const char *pLocale, int nLocale, int (*xToken)(void*, int, const char*, int, int, int)){
  StemTokenizer *p = (StemTokenizer*)pTok;
  if( (flags & FTS5_TOKENIZE_QUERY)==0 ){
    int iLang = langOf(pLocale, nLocale);
    if( iLang<0 ){
      return p->porter.xTokenize(p->pPorter, pCtx, flags, pText, nText, xToken);
    }
    LangOut o = {p, iLang, pCtx, xToken};
    return p->unicode.xTokenize(p->pUnicode, (void*)&o, flags, pText, nText, emitLang);
  }
  Words w = {0, 0, 0, SQLITE_OK};
  int rc = p->unicode.xTokenize(p->pUnicode, (void*)&w, flags, pText, nText, collectWord);
  for(int i=0; rc==SQLITE_OK && i<w.n; i++){
    Word *x = &w.a[i];
    if( i==w.n-1 && (flags & FTS5_TOKENIZE_PREFIX) ){
      rc = xToken(pCtx, 0, x->zText, x->nText, x->iStart, x->iEnd);
      continue;
    }
    if( x->nText<STEM_MIN || x->nText>STEM_MAX ){ /* no stemmer stems it */
      rc = xToken(pCtx, 0, x->zText, x->nText, x->iStart, x->iEnd);
      continue;
    }
    Stems s; s.n = 0;
    rc = p->porter.xTokenize(p->pPorter, (void*)&s, flags & ~FTS5_TOKENIZE_PREFIX, x->zText, x->nText, collectPorter);
    if( rc==SQLITE_OK && s.n==0 ) rc = addStem(&s, x->zText, x->nText);
    for(int l=0; rc==SQLITE_OK && l<N_LANG; l++){
      const char *z; int n;
      rc = snowballStem(p, l, x->zText, x->nText, &z, &n);
      if( rc==SQLITE_OK ) rc = addStem(&s, z, n);
    }
    for(int k=0; rc==SQLITE_OK && k<s.n; k++){
      rc = xToken(pCtx, k>0 ? FTS5_TOKEN_COLOCATED : 0, s.az[k], s.an[k], x->iStart, x->iEnd);
    }
  }
  for(int i=0; i<w.n; i++) sqlite3_free(w.a[i].zText);
  sqlite3_free(w.a);
  return rc;
}

/* adds the tokenizer to the connection's FTS5 (rank.c calls it) */
int shelfmarkRegisterStem(fts5_api *api){
  static fts5_tokenizer_v2 tok = {2, stemCreate, stemDelete, stemTokenize};
  if( api->iVersion<3 ) return SQLITE_ERROR; /* no version 2 tokenizers */
  return api->xCreateTokenizer_v2(api, "shelfmark", (void*)api, &tok, 0);
}

/* the languages of aLang, for the test that compares them with the root
** package's (stem.go) */
int shelfmarkStemLangs(const char ***paz){
  *paz = aLang;
  return N_LANG;
}
