"""The file formats: schemas, readers and writers. Nothing else parses or writes report files."""
