"""What the rules hand each other: every Parquet artifact's schema (`schemas`), the one way to read and write them
(`io`), the results paths the library names (`paths`) and how an image is named in every table and a video's shard is found (`image_ids`)."""
