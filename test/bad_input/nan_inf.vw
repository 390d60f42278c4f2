1 |f a:nan b:inf c:-inf d:1
nan |f e
inf |f f
1 inf |f g
-1 |f h:NaN
