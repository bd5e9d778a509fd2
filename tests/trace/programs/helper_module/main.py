from helper import Point
import helper
p = Point(1, 2).moved(3)
print(p, helper.__name__, helper.__file__.endswith("helper.py"))
