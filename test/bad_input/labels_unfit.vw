2 |f a
0 |f b
5 |f c
-3 |f d
