"""The protoc-generated stubs land here when the package is installed (not committed)."""
