SELECT COUNT(*), SUM(score) FROM conf_people
