class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def moved(self, dx):
        return Point(self.x + dx, self.y)
    def __repr__(self):
        return "Point(%d, %d)" % (self.x, self.y)
