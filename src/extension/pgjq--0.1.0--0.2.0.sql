-- pgjq 0.1.0 -> 0.2.0. A fresh CREATE EXTENSION pgjq runs pgjq--0.1.0.sql and then this script (see the
-- README's "Upgrading"), so everything 0.2.0 changes is written here, once.
\echo Use "ALTER EXTENSION pgjq UPDATE TO '0.2.0'" to load this file. \quit
