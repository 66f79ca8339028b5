-- bloomidx 1.0 -> 1.1: functions to look inside an index and to size one
-- before building it.  The on-disk format is unchanged: indexes built by
-- 1.0 keep answering after ALTER EXTENSION bloomidx UPDATE, and a fresh
-- CREATE EXTENSION installs 1.0 and then this script.
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit
