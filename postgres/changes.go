package postgres

import ()
