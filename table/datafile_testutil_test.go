package table

// fixturePKSchema is schema-0 of the pk-dv-parquet and pk-mor-parquet tables.
func fixturePKSchema(dv bool) *Schema {
	s := &Schema{
		Fields: []Field{
			{ID: 0, Name: "f0", Type: String().NotNull()},
			{ID: 1, Name: "f1", Type: Int().NotNull()},
			{ID: 2, Name: "f2", Type: Int().NotNull()},
			{ID: 3, Name: "f3", Type: Double()},
		},
		HighestFieldID: 3,
		PartitionKeys:  []string{"f1"},
		PrimaryKeys:    []string{"f0", "f1", "f2"},
		Options:        map[string]string{"bucket": "2", "bucket-key": "f2", "file.format": "parquet"},
	}
	if dv {
		s.Options[OptionDeletionVectors] = "true"
	}
	return s
}
