package sqlite

import ()
