SELECT STDDEV(height) FROM conf_people
