SELECT p.id, o.id AS order_id FROM conf_people AS p INNER JOIN conf_orders AS o ON o.person_id = p.id
