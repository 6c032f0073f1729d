"""Sessions: immutable headers, append-only event logs, the live store, persistence, projections."""
